import { setMaxListeners } from 'node:events';
import { errors } from '../errors';

/**
 * Tracks in-flight requests and streams so that shutdown answers every accepted request:
 * it lets them finish up to a deadline, then stops the rest: a stream ends with an error
 * event (through `stopSignal`, which the stream writer watches); a request still waiting
 * for its upstream (queued for a connection or not yet answered) is aborted with
 * `shutting_down`, which the error middleware answers 503 with Retry-After.
 */
/** What shutdown stops: a request's abort (src/pipeline/request-abort.ts) or an AbortController. */
export interface Abortable {
  abort(reason?: unknown): void;
}

/**
 * The stop signal: every open stream listens to it (and lets go when it ends), so more than ten is normal load, not the
 * leak node warns of past ten listeners ("MaxListenersExceededWarning" on stderr with the 11th concurrent stream).
 */
function stopController(): AbortController {
  const c = new AbortController();
  setMaxListeners(0, c.signal);
  return c;
}

export class Lifecycle {
  private readonly active = new Set<Promise<unknown>>();
  /**
   * The requests in flight, each entry knowing its place: one leaves by taking the last one's place. An array, not a
   * Set: a Set gave each request's abort an identity hash on the way in and hashed it again on the way out.
   */
  private readonly requests: Array<{ ac: Abortable; at: number }> = [];
  private readonly stopper = stopController();
  /** While draining: told each time a request leaves (no promise is made per request). */
  private left: (() => void) | null = null;
  draining = false;

  get stopSignal(): AbortSignal {
    return this.stopper.signal;
  }

  get openStreams(): number {
    return this.active.size;
  }

  get openRequests(): number {
    return this.requests.length;
  }

  track<T>(p: Promise<T>): Promise<T> {
    this.active.add(p);
    const done = () => this.active.delete(p);
    p.then(done, done);
    return p;
  }

  /** A request enters (its abort stops it at the deadline); call the returned function once it is answered. */
  enter(ac: Abortable): () => void {
    const entry = { ac, at: this.requests.length };
    this.requests.push(entry);
    return () => {
      if (entry.at < 0) return;
      const last = this.requests.pop()!;
      if (last !== entry) (this.requests[entry.at] = last).at = entry.at;
      entry.at = -1;
      this.left?.();
    };
  }

  /** Resolves once every request has left and every tracked stream has ended. */
  private settled(): Promise<void> {
    return new Promise<void>((resolve) => {
      const check = () => {
        if (this.requests.length > 0) return;
        this.left = null;
        void Promise.allSettled([...this.active]).then(() => resolve());
      };
      this.left = check;
      check();
    });
  }

  /** Wait for requests and streams up to graceMs, then stop the rest and wait for them to be answered. */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    if (this.active.size + this.requests.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((r) => (timer = setTimeout(r, graceMs)));
      await Promise.race([this.settled(), deadline]);
      clearTimeout(timer);
    }
    if (this.active.size + this.requests.length > 0) {
      const reason = errors.shuttingDown();
      this.stopper.abort(reason);
      for (const { ac } of [...this.requests]) ac.abort(reason);
      await this.settled();
    }
  }
}
