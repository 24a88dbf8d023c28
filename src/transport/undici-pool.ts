import type * as Undici from 'undici';

interface PoolParts {
  Pool: typeof Undici.Pool;
  errors: typeof Undici.errors;
  util: { parseHeaders(raw: Buffer[]): Record<string, string | string[] | undefined> };
}

/**
 * undici's Pool, its request(), its error classes and its header parsing, without undici's index: the index loads
 * every dispatcher, fetch, WebSocket, EventSource, the HTTP cache and the mocks (~110 modules,
 * ~3 MB of heap for the life of the process) where the gateway uses one Pool and request().
 * request() is mixed into Dispatcher.prototype as the index does (the same module, so loading
 * the index later changes nothing). Should undici move these files, the index is used.
 */
function load(): PoolParts {
  try {
    const dispatcher = require('undici/lib/dispatcher/dispatcher') as { prototype: object };
    if (!Object.hasOwn(dispatcher.prototype, 'request'))
      Object.assign(dispatcher.prototype, { request: require('undici/lib/api/api-request') as unknown });
    return {
      Pool: require('undici/lib/dispatcher/pool') as typeof Undici.Pool,
      errors: require('undici/lib/core/errors') as typeof Undici.errors,
      util: require('undici/lib/core/util') as PoolParts['util'],
    };
  } catch {
    return require('undici') as typeof Undici & Pick<PoolParts, 'util'>;
  }
}

export const { Pool, errors: undiciErrors, util: undiciUtil } = load();
export type Pool = Undici.Pool;
