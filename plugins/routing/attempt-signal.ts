import { errors, type GatewayError } from '../../src/errors';
import type { RequestAbort } from '../../src/pipeline/request-abort';

export interface AttemptSignal {
  signal: AbortSignal;
  abort(reason?: GatewayError): void;
  dispose(): void;
}

/**
 * One attempt's abort signal: follows the request's abort (client gone, shutdown) and
 * fires by itself when the request's `timeout` runs out, with a 504 as the reason.
 */
export function attemptSignal(parent: RequestAbort, timeoutMs: number, provider: string): AttemptSignal {
  const ac = new AbortController();
  const unfollow = parent.onAbort((reason) => ac.abort(reason));
  const timer = setTimeout(() => ac.abort(errors.upstreamTimeout(provider)), timeoutMs);
  timer.unref();
  return {
    signal: ac.signal,
    abort: (reason) => ac.abort(reason ?? errors.clientClosed()),
    dispose: () => {
      clearTimeout(timer);
      unfollow();
    },
  };
}
