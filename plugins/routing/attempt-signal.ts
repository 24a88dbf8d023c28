import { errors, RequestAbort } from '../../src/plugin';

/**
 * One attempt's abort: follows the request's abort (client gone, shutdown) and fires by
 * itself when the request's `timeout` runs out, with a 504 as the reason. It is the
 * upstream call's signal as it is (no AbortController unless a local adapter asks for one).
 */
export class AttemptAbort extends RequestAbort {
  private readonly unfollow: () => void;
  private readonly timer: NodeJS.Timeout;

  constructor(parent: RequestAbort, timeoutMs: number, provider: string) {
    super();
    this.unfollow = parent.onAbort((reason) => this.abort(reason));
    this.timer = setTimeout(() => this.abort(errors.upstreamTimeout(provider)), timeoutMs);
    this.timer.unref();
  }

  /** Without a reason, the client went away. */
  override abort(reason?: unknown): void {
    super.abort(reason ?? errors.clientClosed());
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.unfollow();
  }
}
