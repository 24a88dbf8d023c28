import { errors } from '../errors';
import type { GatewayContext, GatewayMiddleware, Next } from './plugin';

import type { PluginTimer } from './hooks';

export interface NamedMiddleware {
  name: string;
  middleware: GatewayMiddleware;
}

/**
 * koa-compose for the chat chain, refusing a plugin that calls next() twice. With a
 * timer, each plugin's self time is measured (before next() plus after it); without
 * one, nothing extra runs per request.
 */
export function compose(chain: readonly NamedMiddleware[], timer?: PluginTimer): (ctx: GatewayContext) => Promise<void> {
  const middleware = timer ? chain.map((c) => timed(c, timer)) : chain.map((c) => c.middleware);
  return (ctx) => {
    let last = -1;
    const dispatch = (i: number): Promise<void> => {
      if (i <= last) return Promise.reject(errors.internal());
      last = i;
      const fn = middleware[i];
      if (!fn) return Promise.resolve();
      const next: Next = () => dispatch(i + 1);
      try {
        return fn(ctx, next);
      } catch (e) {
        return Promise.reject(e);
      }
    };
    return dispatch(0);
  };
}

function timed(c: NamedMiddleware, timer: PluginTimer): GatewayMiddleware {
  return async (ctx, next) => {
    const startedAt = Date.now();
    const start = performance.now();
    let inner = 0;
    try {
      await c.middleware(ctx, async () => {
        const t = performance.now();
        try {
          await next();
        } finally {
          inner += performance.now() - t;
        }
      });
    } finally {
      const total = performance.now() - start;
      timer(c.name, (total - inner) / 1000, startedAt, total, ctx);
    }
  };
}
