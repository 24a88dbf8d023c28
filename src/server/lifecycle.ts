import { errors } from '../errors';

/**
 * Tracks in-flight streams so that shutdown can let them finish up to a deadline, then
 * end the rest with an error event (through `stopSignal`, which the stream writer watches).
 */
export class Lifecycle {
  private readonly active = new Set<Promise<unknown>>();
  private readonly stopper = new AbortController();
  draining = false;

  get stopSignal(): AbortSignal {
    return this.stopper.signal;
  }

  get openStreams(): number {
    return this.active.size;
  }

  track<T>(p: Promise<T>): Promise<T> {
    this.active.add(p);
    const done = () => this.active.delete(p);
    p.then(done, done);
    return p;
  }

  /** Wait for streams up to graceMs, then stop the rest and wait for them to end. */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    if (this.active.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((r) => (timer = setTimeout(r, graceMs)));
      await Promise.race([Promise.allSettled([...this.active]), deadline]);
      clearTimeout(timer);
    }
    if (this.active.size > 0) {
      this.stopper.abort(errors.shuttingDown());
      await Promise.allSettled([...this.active]);
    }
  }
}
