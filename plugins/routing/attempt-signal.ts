import { errors, type GatewayError } from '../../src/errors';

export interface AttemptSignal {
  signal: AbortSignal;
  abort(reason?: GatewayError): void;
  dispose(): void;
}

/**
 * One attempt's abort signal: follows the request's signal (client gone, shutdown) and
 * fires by itself when the request's `timeout` runs out, with a 504 as the reason.
 */
export function attemptSignal(parent: AbortSignal, timeoutMs: number, provider: string): AttemptSignal {
  const ac = new AbortController();
  const onParent = () => ac.abort(parent.reason);
  if (parent.aborted) ac.abort(parent.reason);
  else parent.addEventListener('abort', onParent, { once: true });
  const timer = setTimeout(() => ac.abort(errors.upstreamTimeout(provider)), timeoutMs);
  timer.unref();
  return {
    signal: ac.signal,
    abort: (reason) => ac.abort(reason ?? errors.clientClosed()),
    dispose: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', onParent);
    },
  };
}
