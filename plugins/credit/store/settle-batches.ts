import type { SettleArgs, SettleResult } from './settle';
import { settleRows, type RoundsDb } from './settle-rows';

/** Settlements in one batch at most (its statements grow with it; more wait for the next). */
const MAX_BATCH = 64;

interface Waiting {
  args: SettleArgs;
  done: (r: SettleResult) => void;
  fail: (e: unknown) => void;
}

/**
 * PostgreSQL's settlements of one process, committed together as the SQLite engine's group commit does: those that
 * arrive while a batch is being committed wait for it, then go as the next one, so that a busy process commits (and
 * locks its accounts' and keys' rows) once for many requests. A batch that fails is settled again one by one: one
 * settlement that cannot be committed is refused alone.
 */
export class SettlementBatches {
  private queue: Waiting[] = [];
  private running = false;

  constructor(private readonly db: RoundsDb) {}

  settle(args: SettleArgs): Promise<SettleResult> {
    return new Promise((done, fail) => {
      this.queue.push({ args, done, fail });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) await this.commit(this.take());
    } finally {
      this.running = false;
    }
  }

  /** The next batch: the first MAX_BATCH waiting of distinct reservations (a repeat waits for the next batch). */
  private take(): Waiting[] {
    const ids = new Set<string>();
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    for (const w of this.queue) {
      if (batch.length < MAX_BATCH && !ids.has(w.args.reservationId)) {
        ids.add(w.args.reservationId);
        batch.push(w);
      } else rest.push(w);
    }
    this.queue = rest;
    return batch;
  }

  private async commit(batch: Waiting[]): Promise<void> {
    try {
      const rs = await settleRows(
        this.db,
        batch.map((w) => w.args),
      );
      batch.forEach((w, i) => w.done(rs[i]));
    } catch (e) {
      if (batch.length === 1) return batch[0].fail(e);
      for (const w of batch) await this.commit([w]);
    }
  }
}
