import { errors, type GatewayError } from '../errors';
import type { GatewayContext, GatewayMiddleware, Next } from './plugin';

import type { PluginTimer } from './hooks';

export interface NamedMiddleware {
  name: string;
  middleware: GatewayMiddleware;
}

/** Told when a plugin breaks the onion contract (the core logs it with the plugin's name). */
export type ContractReporter = (err: GatewayError) => void;

/**
 * koa-compose for the chat chain, guarding the contract each plugin signs: next() at most
 * once, and awaited. A second call, or a middleware that settles while the plugins after it
 * are still running, is a named `plugin_contract_violation` error that names the plugin
 * (a 500 for the client, a log line for the operator). With a timer, each plugin's self
 * time is measured (before next() plus after it); without one, nothing extra runs.
 */
export function compose(
  chain: readonly NamedMiddleware[],
  timer?: PluginTimer,
  report?: ContractReporter,
): (ctx: GatewayContext) => Promise<void> {
  const middleware = timer ? chain.map((c) => timed(c, timer)) : chain.map((c) => c.middleware);
  const names = chain.map((c) => c.name);
  const violation = (i: number, detail: string): GatewayError => {
    const err = errors.pluginContract(names[i], detail);
    report?.(err);
    return err;
  };
  return (ctx) => {
    const dispatch = (i: number): Promise<void> => {
      const fn = middleware[i];
      if (!fn) return Promise.resolve();
      let downstream = 0; // 0: next() not called, 1: running, 2: settled, 3: called twice
      let result: Promise<void> | undefined;
      const next: Next = () => {
        if (downstream !== 0) {
          downstream = 3;
          const twice = Promise.reject(violation(i, 'called next() more than once'));
          twice.catch(() => undefined); // the plugin may ignore it: the check below still fails the request
          return twice;
        }
        downstream = 1;
        result = dispatch(i + 1);
        result.then(
          () => void (downstream === 1 && (downstream = 2)),
          () => void (downstream === 1 && (downstream = 2)),
        );
        return result;
      };
      let own: Promise<void>;
      try {
        own = fn(ctx, next);
      } catch (e) {
        return Promise.reject(e);
      }
      return Promise.resolve(own).then(() => {
        if (downstream === 1) throw violation(i, 'finished before the plugins after it did: await (or return) next()');
        if (downstream === 3) throw errors.pluginContract(names[i], 'called next() more than once');
      });
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
