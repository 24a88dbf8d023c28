import { errors } from '../errors';
import type { GatewayContext, GatewayMiddleware, Next } from './plugin';

/** koa-compose for the chat chain, refusing a plugin that calls next() twice. */
export function compose(middleware: readonly GatewayMiddleware[]): (ctx: GatewayContext) => Promise<void> {
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
