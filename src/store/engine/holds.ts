import { randomId } from '../../ids';
import type { Dialect } from '../db';

/** One request's credit reservation, held in the SQLite engine's memory until it settles. */
export interface Hold {
  id: string;
  accountId: string;
  keyHash: string | null;
  /** nano-credits */
  amount: number;
  createdAt: number;
}

/** A hold as the main thread made it, with the book (the engine's worker thread) it was made in. */
export type MadeHold = Hold & { book: string };

/**
 * A hold with its book, written out field by field. Not `{ ...hold, book }`: in optimized code this V8 (node 20) gives
 * every object made by a spread followed by a new property a map of its own, so that each such object cost a new map
 * (old-space garbage) and sent every property load on it to the runtime (megamorphic, a stub-cache miss each time).
 */
export function madeHold(h: Hold, book: string): MadeHold {
  return { id: h.id, accountId: h.accountId, keyHash: h.keyHash, amount: h.amount, createdAt: h.createdAt, book };
}

/**
 * The credit reservations of a SQLite store, held where its only writer runs (the engine) rather than as rows:
 * a reservation then costs no commit, and one that a crash leaves behind is gone with the process that made it
 * (SQLite is one process's store: a second process on the same file releases the first one's reservations at
 * start-up). The amounts held per account and per key are read from SQL as `gw_held('account' | 'key', id)`.
 *
 * Every change is journalled until the engine keeps it (its transaction committed) or undoes it (its
 * transaction rolled back), so the holds never disagree with what the database committed.
 */
export class HoldBook {
  /** This book's own id: a hold made in another book (a worker thread that died) is not in this one. */
  readonly id = randomId('book_');
  private readonly byId = new Map<string, Hold>();
  private readonly accounts = new Map<string, number>();
  private readonly keys = new Map<string, number>();
  private journal: Array<() => void> = [];
  private clock = 0;
  /**
   * The writer connection's PRAGMA data_version as read in the engine's current turn, or null. It moves only when
   * another connection commits, which none can while the engine writes: one reading serves every settlement of a
   * group commit. The engine sets it back to null when a turn begins (a flush, or a procedure run at once).
   */
  dataVersion: number | null = null;

  hold(h: Hold): void {
    if (this.byId.has(h.id)) throw new Error(`reservation '${h.id}' is already held`);
    this.add(h);
    this.journal.push(() => this.drop(h));
  }

  /** Take a reservation off the book; undefined when it is not held (settled before, or never made). */
  release(id: string): Hold | undefined {
    const h = this.byId.get(id);
    if (!h) return undefined;
    this.drop(h);
    this.journal.push(() => this.add(h));
    return h;
  }

  /** The next number of this book's clock, which orders what the engine reports of committed credit. */
  tick(): number {
    return ++this.clock;
  }

  get(id: string): Hold | undefined {
    return this.byId.get(id);
  }

  /** nano-credits held against an account or a key. */
  held(scope: 'account' | 'key', id: string): number {
    return (scope === 'account' ? this.accounts : this.keys).get(id) ?? 0;
  }

  /** Reservations made before `before` (ms), oldest first. */
  olderThan(before: number): string[] {
    const out: string[] = [];
    for (const h of this.byId.values()) if (h.createdAt <= before) out.push(h.id);
    return out;
  }

  count(accountId?: string): number {
    if (accountId === undefined) return this.byId.size;
    let n = 0;
    for (const h of this.byId.values()) if (h.accountId === accountId) n++;
    return n;
  }

  /** The changes since the last keep() or undo() stand (their transaction committed). */
  keep(): void {
    this.journal.length = 0;
  }

  /** The changes since the last keep() or undo() are taken back, newest first (their transaction rolled back). */
  undo(): void {
    this.undoTo(0);
  }

  /** Where the journal stands now: undoTo(mark) takes back only what changed after it (a savepoint rolled back). */
  mark(): number {
    return this.journal.length;
  }

  undoTo(mark: number): void {
    for (let i = this.journal.length - 1; i >= mark; i--) this.journal[i]();
    this.journal.length = mark;
  }

  private add(h: Hold): void {
    this.byId.set(h.id, h);
    bump(this.accounts, h.accountId, h.amount);
    if (h.keyHash) bump(this.keys, h.keyHash, h.amount);
  }

  private drop(h: Hold): void {
    this.byId.delete(h.id);
    bump(this.accounts, h.accountId, -h.amount);
    if (h.keyHash) bump(this.keys, h.keyHash, -h.amount);
  }
}

function bump(m: Map<string, number>, k: string, by: number): void {
  const v = (m.get(k) ?? 0) + by;
  if (v === 0) m.delete(k);
  else m.set(k, v);
}

/**
 * A repository's column list with `reserved` between `before` and `after`: on SQLite the column plus what the engine
 * holds against the row (`gw_held(scope, idColumn)`), elsewhere the column alone.
 */
export function columnsWithHeld(
  before: string,
  scope: 'account' | 'key',
  idColumn: string,
  after: string,
): Record<Dialect, string> {
  return {
    sqlite: `${before}, reserved + gw_held('${scope}', ${idColumn}) AS reserved, ${after}`,
    postgres: `${before}, reserved, ${after}`,
  };
}
