import * as door from '../../../src/plugin';
import type { Db, Hold, MadeHold, Proc } from '../../../src/plugin';
import { committedProc, noteHoldProc, type CommittedCredit, type KeyCredit, type ReserveResult } from './reserve';

// Read once, at load: a name the door re-exports is a getter, and these are called for every request.
const { HoldBook, madeHold, randomId, windowStart } = door;

/** What this thread knows of an account's or a key's committed credit, and from when. */
interface Known<T> {
  value: T;
  /** the engine's reading it came from (CommittedCredit.seq) */
  seq: number;
  /** when it came (ms) */
  at: number;
  /** the store's foreignWrites when it was asked for */
  epoch: number;
}

/**
 * A store that counts the writes that may change credit behind the main thread's back, and takes procedures told to
 * it without an answer (SqliteDb).
 */
export interface CountsWrites {
  readonly foreignWrites: number;
  tell<A>(proc: Proc<A, unknown>, args: A): void;
}

/**
 * How long a known balance decides holds on its own. Every settlement brings the balances it leaves, so under load
 * they are never that old; an idle account's is read again. A change another process commits to the file (the CLI)
 * is seen at the next reading of any balance, or after this long.
 */
const FRESH_MS = 1000;
/** Known balances kept before the stale ones are swept out. */
const PRUNE_ABOVE = 10_000;

/** A key's free credit at `now` (its window may have rolled over since it was read). */
function keyFree(k: KeyCredit, now: number): number {
  if (k.limit === null) return Infinity;
  const rolled = k.reset !== null && k.windowStart < windowStart(k.reset, now);
  return k.limit - (rolled ? 0 : k.windowUsage) - k.reserved;
}

/**
 * Credit holds of a SQLite store, decided on the main thread: a reservation that the balances known here cover is
 * held at once, without a round trip to the store's worker thread, and entered into the engine's book by the next
 * message (SQL reads it as `gw_held`). Only one process writes a SQLite store, and every settlement reports the
 * balances it leaves (in order, by the engine's clock), so the balances known here are the committed ones less
 * nothing this thread has not counted: what it holds and has not seen settled stays counted. A balance that is not
 * known, is older than FRESH_MS, predates a write of anything else (an admin's change), or would refuse the request
 * is read from the engine first, and the decision is made here on that reading: refusals always come from a fresh
 * one.
 */
export class LocalCredit {
  private readonly holds = new HoldBook();
  private readonly books = new Map<string, string>();
  private readonly accounts = new Map<string, Known<number | null>>();
  private readonly keys = new Map<string, Known<KeyCredit | null>>();
  /** The engine's book, its data_version and the newest reading seen; readings older than `floor` are dropped. */
  private book: string | null = null;
  private version = -1;
  private newest = 0;
  private floor = 0;
  private readonly deadBooks = new Set<string>();
  private pruned = 0;

  constructor(private readonly db: Db & CountsWrites) {}

  /** What to hand `learn` and `settled` with a reading asked for now. */
  epoch(): number {
    return this.db.foreignWrites;
  }

  reserve(accountId: string, keyHash: string | null, amount: number, now: number): Promise<ReserveResult> {
    const at = Date.now();
    if (this.book !== null && this.decide(accountId, keyHash, amount, now, at) === null)
      return Promise.resolve(this.hold(accountId, keyHash, amount, now));
    const epoch = this.epoch();
    return this.db.call(committedProc, { accountId, keyHash }).then((c) => {
      this.learn(c, epoch, true);
      const refused = this.decide(accountId, keyHash, amount, now, null);
      return refused ?? this.hold(accountId, keyHash, amount, now);
    });
  }

  /** The hold as this thread made it (the settlement charges it even if the engine's book is gone), or null. */
  made(id: string): MadeHold | null {
    const h = this.holds.get(id);
    const book = this.books.get(id);
    return h && book ? madeHold(h, book) : null;
  }

  /** A settlement came back: what it left is known from `c` (if it says), and its hold is no longer counted. */
  settled(id: string, c: CommittedCredit | null, epoch: number): void {
    if (c) this.learn(c, epoch);
    if (this.holds.release(id)) this.holds.keep();
    this.books.delete(id);
  }

  /** Holds made before `before` (ms) and not seen settled. */
  olderThan(before: number): string[] {
    return this.holds.olderThan(before);
  }

  /**
   * Learn the balances of a reading asked for at `epoch` (the store's foreignWrites then). Readings may arrive out of
   * order (each reaches its caller through its own chain of promises): an older one never replaces a newer. `force`
   * keeps a reading even when newer news has made it doubtful (the caller decides on it, as the engine would have).
   */
  learn(c: CommittedCredit, epoch: number, force = false): void {
    if (c.book !== this.book) {
      if (this.deadBooks.has(c.book)) return; // a reading of a worker thread that has died since
      // A new worker thread: its book and its clock start again, and nothing known of the last one still holds.
      if (this.book !== null) this.deadBooks.add(this.book);
      this.forget(c.book, c.version, 0);
    } else if (c.seq > this.newest && c.version !== this.version) {
      this.forget(c.book, c.version, c.seq); // another process committed to the file: nothing known still holds
    } else if (c.seq < this.floor && !force) return;
    this.newest = Math.max(this.newest, c.seq);
    const at = Date.now();
    if (this.accounts.size + this.keys.size > PRUNE_ABOVE && at - this.pruned > FRESH_MS) this.prune(at);
    put(this.accounts, c.accountId, { value: c.account, seq: c.seq, at, epoch });
    if (c.keyHash !== null) put(this.keys, c.keyHash, { value: c.key, seq: c.seq, at, epoch });
  }

  /** Forget balances too old to decide anything (an idle account's), so the maps hold only the busy ones. */
  private prune(at: number): void {
    this.pruned = at;
    for (const m of [this.accounts, this.keys] as Array<Map<string, Known<unknown>>>)
      for (const [id, k] of m) if (at - k.at > FRESH_MS) m.delete(id);
  }

  private forget(book: string, version: number, floor: number): void {
    this.accounts.clear();
    this.keys.clear();
    this.book = book;
    this.version = version;
    this.floor = floor;
    this.newest = floor;
  }

  /**
   * null when the request fits both balances (less what this thread holds); else the refusal. With `at` (ms, now)
   * only balances still fresh decide, and a refusal means "read them again" (an unknown balance refuses too).
   */
  private decide(
    accountId: string,
    keyHash: string | null,
    amount: number,
    now: number,
    at: number | null,
  ): Extract<ReserveResult, { ok: false }> | null {
    const a = this.known(this.accounts.get(accountId), at);
    const accountFree = a && a.value !== null ? a.value - this.holds.held('account', accountId) : 0;
    if (!a || accountFree < amount) return { ok: false, limit: 'account', available: Math.max(0, accountFree) };
    if (keyHash === null) return null;
    const k = this.known(this.keys.get(keyHash), at);
    const free = k && k.value !== null ? keyFree(k.value, now) - this.holds.held('key', keyHash) : 0;
    if (!k || free < amount) return { ok: false, limit: 'key', available: Math.max(0, free) };
    return null;
  }

  private known<T>(k: Known<T> | undefined, at: number | null): Known<T> | undefined {
    if (!k || at === null) return k;
    return at - k.at <= FRESH_MS && k.epoch === this.epoch() ? k : undefined;
  }

  private hold(accountId: string, keyHash: string | null, amount: number, now: number): ReserveResult {
    const h: Hold = { id: randomId('rsv_'), accountId, keyHash, amount, createdAt: now };
    const book = this.book as string;
    this.holds.hold(h);
    this.holds.keep();
    this.books.set(h.id, book);
    // Entered into the engine's book with the next request that crosses to it (at the latest its settlement), before
    // anything asked after it, so every SQL read sees it; if that worker thread dies first, the settlement charges
    // the hold as made here (`made`).
    this.db.tell(noteHoldProc, h);
    return { ok: true, id: h.id, book };
  }
}

/** Keep the newer of two readings of the same balance. */
function put<T>(m: Map<string, Known<T>>, id: string, k: Known<T>): void {
  const old = m.get(id);
  if (!old || old.seq < k.seq) m.set(id, k);
}
