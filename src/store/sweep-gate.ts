/**
 * When a periodic sweep of the store next has anything to do, so that it skips the rounds before: a sweep that
 * reads the store wakes a SQLite store's worker thread (which stops after idling, ~6 MB) and a database
 * connection. Its knowledge is capped: another process's writes are seen at the latest MAX_SKIP_MS later.
 */
export class SweepGate {
  /** Rows another process wrote are swept at most this long after they fall due. */
  static readonly MAX_SKIP_MS = 10 * 60_000;
  /** The next time a sweep may find something (0: not known, sweep). */
  private next = 0;

  /**
   * One round: when anything may be due, `sweep` deletes up to `batch` of it; a round that found less than a batch
   * asks `nextDue` when the next falls due, and the rounds before then do nothing.
   */
  async round(
    now: number,
    batch: number,
    sweep: () => Promise<number>,
    nextDue: () => Promise<number | null>,
  ): Promise<void> {
    if (now < this.next) return;
    // Nothing due is left: skip the rounds before the first thing falls due (null: nothing will).
    if ((await sweep()) < batch) this.next = Math.min((await nextDue()) ?? Infinity, now + SweepGate.MAX_SKIP_MS);
  }

  /** This process wrote something that falls due at `at`. */
  lower(at: number): void {
    if (at < this.next) this.next = at;
  }
}
