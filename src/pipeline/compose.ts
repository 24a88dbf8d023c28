import { errors, type GatewayError } from '../errors';
import type { GatewayContext, GatewayMiddleware, Next } from './plugin';
import { callAsync } from '../call-async';
import { EPOCH_OFFSET_MS, nowMs } from '../clock';

import type { PluginTimer } from './hooks';

export interface NamedMiddleware {
  name: string;
  middleware: GatewayMiddleware;
}

/** Told when a plugin breaks the onion contract (the core logs it with the plugin's name). */
export type ContractReporter = (err: GatewayError) => void;

/** Where a plugin's call to next() stands. */
const enum Downstream {
  NotCalled,
  Running,
  Settled,
  CalledTwice,
}

/**
 * koa-compose for the chat chain, guarding the contract each plugin signs: next() at most
 * once, and awaited. A second call, or a middleware that settles while the plugins after it
 * are still running, is a named `plugin_contract_violation` error that names the plugin
 * (a 500 for the client, a log line for the operator). With a timer, each plugin's self
 * time is measured (its whole time minus that of the plugins after it) from one timestamp
 * when it starts and one when it settles; without one, nothing extra runs for timing.
 */
export function compose(
  chain: readonly NamedMiddleware[],
  timer?: PluginTimer,
  report?: ContractReporter,
): (ctx: GatewayContext) => Promise<void> {
  const middleware = chain.map((c) => c.middleware);
  const names = chain.map((c) => c.name);
  const violation = (i: number, detail: string): GatewayError => {
    const err = errors.pluginContract(names[i], detail);
    report?.(err);
    return err;
  };
  return (ctx) => {
    // Time spent in dispatch(i + 1), i.e. in the plugins after plugin i (timed chains only). An array, not a
    // Float64Array: making a typed array took ~1.1 us (its backing store is allocated apart), an array ~30 ns.
    const inner = timer ? new Array<number>(middleware.length).fill(0) : undefined;
    // `settled`: told when this layer's promise settles (its caller's downstream is then done): one handler less a
    // layer than a second then() on the same promise.
    const dispatch = (i: number, settled?: () => void): Promise<void> => {
      const fn = middleware[i];
      if (!fn) {
        settled?.();
        return Promise.resolve();
      }
      let downstream = Downstream.NotCalled;
      const downstreamSettled = () => void (downstream === Downstream.Running && (downstream = Downstream.Settled));
      const next: Next = () => {
        if (downstream !== Downstream.NotCalled) {
          downstream = Downstream.CalledTwice;
          const twice = Promise.reject(violation(i, 'called next() more than once'));
          twice.catch(() => undefined); // the plugin may ignore it: the check below still fails the request
          return twice;
        }
        downstream = Downstream.Running;
        return dispatch(i + 1, downstreamSettled);
      };
      const start = inner ? nowMs() : 0;
      const p = callAsync(() => fn(ctx, next));
      const timed = () => {
        if (!inner) return;
        const total = nowMs() - start;
        if (i > 0) inner[i - 1] = total;
        timer!(names[i], (total - inner[i]) / 1000, EPOCH_OFFSET_MS + start, total, ctx);
      };
      return p.then(
        () => {
          settled?.();
          timed();
          if (downstream === Downstream.Running)
            throw violation(i, 'finished before the plugins after it did: await (or return) next()');
          if (downstream === Downstream.CalledTwice)
            throw errors.pluginContract(names[i], 'called next() more than once');
        },
        (e: unknown) => {
          settled?.();
          timed();
          throw e;
        },
      );
    };
    return dispatch(0);
  };
}
