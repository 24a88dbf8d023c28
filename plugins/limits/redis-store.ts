import type Redis from 'ioredis';
import type { Logger } from 'pino';
import type { Admission, AdmitRequest, CounterStore, Dimension, ScopeLimits, ScopeUsage } from './counter-store';
import { failFastRedis } from '../../src/plugin';
import { ADMIT_LUA, CANCEL_LUA, FINISH_LUA } from './redis-scripts';

export interface RedisStoreOptions {
  url: string;
  prefix: string;
  windowMs: number;
  leaseMs: number;
  /**
   * A command not answered in this long, on a live connection, counts as Redis being unreachable (a lost connection
   * counts at once).
   */
  timeoutMs: number;
}

/** Finishes and undone admissions kept for Redis while it is away, at most; past it the oldest is left to its lease. */
export const MAX_PENDING = 10_000;
/** How often a store that saw a command time out asks Redis (PING) whether it answers again. */
const PROBE_MS = 200;
const TIMED_OUT = 'Command timed out';

/** What Redis is owed once it answers again: a request's finish, or the undoing of an admission given up on. */
interface Pending {
  id: string;
  keys: string[];
  tokens: number;
  cancel: boolean;
}

/** Thrown when Redis cannot answer; the plugin applies the operator's fail mode. */
export class CounterStoreDown extends Error {}

type AdmitReply = [number, number, number, number, Array<[number, number, number]>];
interface ScriptedRedis {
  limitsAdmit(...args: Array<string | number>): Promise<AdmitReply>;
  limitsFinish(...args: Array<string | number>): Promise<number>;
  limitsCancel(...args: Array<string | number>): Promise<number>;
}

const DIMENSIONS: Record<number, Dimension> = { 1: 'requests', 2: 'tokens', 3: 'concurrency' };

/**
 * Counters in Redis, shared by every replica: one Lua script per admission (all scopes
 * checked and counted atomically) and one per finish. Commands fail fast while Redis is
 * away (no offline queue) and ioredis reconnects by itself; `up` tells which. A command
 * past `timeoutMs` on a live connection (a stalled Redis) counts as away too, until a PING
 * is answered. What Redis could not be told meanwhile (finishes: slot releases and token
 * settlements; and the undoing of admissions whose command failed, which a stalled Redis
 * still runs when it wakes) is kept in memory, bounded, and sent when it answers again,
 * before the store counts as up: the lease (minutes) is only the last resort.
 */
export class RedisCounterStore implements CounterStore {
  readonly kind = 'redis';
  readonly client: Redis;
  private readonly scripted: ScriptedRedis;
  up = false;
  private closing = false;
  onChange?: (up: boolean) => void;
  /** Owed to Redis, oldest first, by admission id. */
  private readonly pending = new Map<string, Pending>();
  private dropped = 0;
  private probe?: NodeJS.Timeout;
  private probing = false;
  private draining?: Promise<boolean>;

  constructor(
    private readonly opts: RedisStoreOptions,
    private readonly logger: Logger,
  ) {
    this.client = failFastRedis(opts.url, opts.timeoutMs, {
      // A command left unanswered by a lost connection is never sent again by itself: an admission resent after its
      // undoing would count for good. What must reach Redis is in `pending`.
      autoResendUnfulfilledCommands: false,
    });
    this.client.defineCommand('limitsAdmit', { lua: ADMIT_LUA });
    this.client.defineCommand('limitsFinish', { lua: FINISH_LUA });
    this.client.defineCommand('limitsCancel', { lua: CANCEL_LUA });
    this.scripted = this.client as unknown as ScriptedRedis;
    this.client.on('ready', () => void this.recover());
    this.client.on('close', () => this.mark(false));
    this.client.on('error', () => this.mark(false));
  }

  /** Connect, waiting at most `waitMs`; an unreachable Redis is not fatal (the fail mode applies). */
  async connect(waitMs: number): Promise<void> {
    await Promise.race([
      this.client.connect().catch(() => undefined),
      new Promise((r) => setTimeout(r, waitMs).unref()),
    ]);
  }

  private mark(up: boolean): void {
    if (this.closing) return;
    if (up) this.stopProbe();
    else this.startProbe();
    if (up === this.up) return;
    this.up = up;
    if (up) this.logger.info('limits: Redis reachable, shared counters in use');
    else this.logger.warn('limits: Redis unreachable or not answering, applying the fail mode until it is back');
    this.onChange?.(up);
  }

  /** Redis answers (again): first what it is owed, then count in it. */
  private async recover(): Promise<void> {
    if (this.pending.size === 0 && !this.draining) return this.mark(true); // the usual case: at once
    if (this.closing || !(await this.drain())) return;
    this.mark(true);
    if (this.pending.size > 0) void this.drain(); // owed between the last send and now
  }

  /** A command failed: timed out on a live connection (a stall) or the connection is lost, Redis counts as away. */
  private failed(e: unknown): void {
    if ((e as Error).message === TIMED_OUT || this.client.status !== 'ready') this.mark(false);
    else void this.drain();
  }

  private owe(p: Pending): void {
    this.pending.set(p.id, p);
    if (this.pending.size <= MAX_PENDING) return;
    this.pending.delete(this.pending.keys().next().value as string);
    if (this.dropped++ % 1000 === 0)
      this.logger.warn(
        { dropped: this.dropped, kept: MAX_PENDING },
        'limits: too much owed to Redis while it is away; the oldest finishes are left to their lease and window',
      );
  }

  private send(p: Pending): Promise<number> {
    return p.cancel
      ? this.scripted.limitsCancel(p.keys.length, ...p.keys, p.id)
      : this.scripted.limitsFinish(p.keys.length, ...p.keys, p.id, p.tokens);
  }

  /** Send what is owed, oldest first; false when Redis stops answering meanwhile (the rest is kept for next time). */
  private drain(): Promise<boolean> {
    this.draining ??= this.drainNow().finally(() => (this.draining = undefined));
    return this.draining;
  }

  private async drainNow(): Promise<boolean> {
    let sent = 0;
    while (this.pending.size > 0) {
      const batch: Pending[] = [];
      for (const p of this.pending.values()) if (batch.push(p) >= 500) break;
      const results = await Promise.allSettled(batch.map((p) => this.send(p)));
      let failure: unknown;
      results.forEach((r, i) => {
        // Redis answered (an error reply too: sending it again would answer the same).
        if (r.status === 'fulfilled' || (r.reason as Error).name === 'ReplyError') {
          if (r.status === 'rejected')
            this.logger.warn({ err: (r.reason as Error).message }, 'limits: Redis refused a settlement');
          if (this.pending.get(batch[i].id) === batch[i]) this.pending.delete(batch[i].id);
          sent++;
        } else failure ??= r.reason;
      });
      if (failure !== undefined) {
        if ((failure as Error).message === TIMED_OUT || this.client.status !== 'ready') this.mark(false);
        return false;
      }
    }
    if (sent > 0) this.logger.info({ sent }, 'limits: Redis told what happened while it was away');
    return true;
  }

  private startProbe(): void {
    if (this.probe || this.closing) return;
    this.probe = setInterval(() => void this.tick(), PROBE_MS);
    this.probe.unref();
  }

  private stopProbe(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = undefined;
  }

  /** While away: a lost connection comes back through ioredis's reconnection ('ready'), a stalled one a PING. */
  private async tick(): Promise<void> {
    if (this.probing || this.up || this.closing || this.client.status !== 'ready') return;
    this.probing = true;
    try {
      await this.client.ping();
      await this.recover();
    } catch {
      // Still not answering: the next tick asks again.
    } finally {
      this.probing = false;
    }
  }

  private keys(s: ScopeLimits, parts: readonly string[]): string[] {
    return parts.map((p) => `${this.opts.prefix}${s.id}:${p}`);
  }

  async admit(req: AdmitRequest): Promise<Admission> {
    if (!this.up) throw new CounterStoreDown('redis is not connected or not answering');
    const keys: string[] = [];
    const args: Array<string | number> = [req.id, req.tokens, req.windowMs ?? this.opts.windowMs, this.opts.leaseMs];
    for (const s of req.scopes) {
      keys.push(...this.keys(s, ['log', 'amt', 'tot', 'run']));
      args.push(s.rpm, s.tpm, s.concurrency);
    }
    let reply: AdmitReply;
    try {
      reply = await this.scripted.limitsAdmit(keys.length, ...keys, ...args);
    } catch (e) {
      // The fail mode decides this request, yet Redis may have run (or, stalled, will run) the admission: undo it
      // once Redis answers again (sent on this connection after it, so it runs after it).
      this.owe({ id: req.id, keys, tokens: 0, cancel: true });
      this.failed(e);
      throw new CounterStoreDown((e as Error).message);
    }
    const [ok, scope, dim, retry, raw] = reply;
    const usage: ScopeUsage[] = raw.map(([requests, tokens, reset]) => ({
      requests,
      tokens,
      requestsResetMs: reset,
      tokensResetMs: reset,
    }));
    if (ok === 1) {
      for (const u of usage) {
        u.requests += 1;
        u.tokens += req.tokens;
        if (u.requests === 1) u.requestsResetMs = u.tokensResetMs = req.windowMs ?? this.opts.windowMs;
      }
      return { ok: true, usage };
    }
    return { ok: false, scope, dimension: DIMENSIONS[dim], retryAfterMs: retry, usage };
  }

  async finish(id: string, scopes: readonly ScopeLimits[], tokens: number): Promise<void> {
    const p: Pending = { id, keys: scopes.flatMap((s) => this.keys(s, ['amt', 'tot', 'run'])), tokens, cancel: false };
    // Redis away: told when it answers again (the slot's lease is minutes; a restart keeps the slot with its data).
    if (!this.up) return this.owe(p);
    try {
      await this.send(p);
    } catch (e) {
      if ((e as Error).name === 'ReplyError') {
        this.logger.warn({ err: (e as Error).message }, 'limits: Redis refused a settlement');
        return;
      }
      // Sent again once Redis answers: a finish run twice is run once.
      this.owe(p);
      this.failed(e);
    }
  }

  async release(id: string, scopes: readonly ScopeLimits[]): Promise<void> {
    const keys = scopes.flatMap((s) => this.keys(s, ['log', 'amt', 'tot', 'run']));
    const p: Pending = { id, keys, tokens: 0, cancel: true };
    if (!this.up) return this.owe(p);
    try {
      await this.send(p);
    } catch (e) {
      if ((e as Error).name === 'ReplyError') return;
      this.owe(p);
      this.failed(e);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.stopProbe();
    this.client.disconnect();
  }
}
