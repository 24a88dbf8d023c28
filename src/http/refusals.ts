import type Koa from 'koa';
import type { Logger } from 'pino';
import type { GatewayError } from '../errors';
import { randomId } from '../ids';
import type { GatewayState } from '../pipeline/state';
import { driveAsync, insertRows, type Param } from '../store/db';
import { GENERATION_COLUMNS, generationParams } from '../store/generations';
import type { Store } from '../store/index';
import { batchOpened } from '../store/request-batch';

/** The endpoints whose refusals are recorded: those a generation record is made for. */
const CHAIN_ROUTES = new Set(['/v1/chat/completions', '/v1/messages', '/v1/responses', '/v1/embeddings']);

/**
 * Light generation records of the requests the gateway refused with a 4xx before any settlement (a bad body, a wrong
 * key, a limit, too little credit, a guard), so that the console counts every outcome (issue 49). A refusal after the
 * credit plugin opened the request's settlement is recorded by that settlement, never twice. Records are written in
 * the background, a batch every `flushMs` in one multi-row insert (a flood of refusals costs the store one statement a
 * tick); past `max` waiting, more are counted in the log and dropped, never held in memory.
 */
export class RefusalRecorder {
  private pending: Param[][] = [];
  private dropped = 0;
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly opts: { flushMs: number; max: number } = { flushMs: 500, max: 5000 },
  ) {
    this.timer = setInterval(() => void this.flush(), opts.flushMs);
    this.timer.unref();
  }

  /** Called by the outer error writer with every error it answers. */
  note(ctx: Koa.Context, err: GatewayError, ms: number): void {
    if (err.status < 400 || err.status >= 499 || ctx.method !== 'POST' || !CHAIN_ROUTES.has(ctx.path)) return;
    const s = ctx.state.gateway as GatewayState | undefined;
    if (s && batchOpened(s.extensions)) return; // its settlement records it
    if (this.pending.length >= this.opts.max) {
      this.dropped++;
      return;
    }
    const p = s?.principal;
    // Refused before its model was resolved (a bad body, a wrong key): no model.
    const model = s?.model.id ?? '';
    this.pending.push(
      generationParams({
        id: randomId('refused_'),
        accountId: p?.accountId ?? '',
        keyHash: p?.keyHash ?? null,
        model,
        provider: null,
        deployment: null,
        promptTokens: 0,
        completionTokens: 0,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        cost: 0,
        latencyMs: Math.round(ms * 1000) / 1000,
        ttftMs: null,
        finishReason: null,
        streamed: false,
        cancelled: false,
        status: 'error',
        errorCode: err.code,
        appReferer: null,
        appTitle: null,
        user: null,
        metadata: null,
        createdAt: Date.now(),
        httpStatus: err.status,
      }),
    );
  }

  /** Write what is waiting (one at a time). */
  flush(): Promise<void> {
    if (this.flushing || (this.pending.length === 0 && this.dropped === 0)) return this.flushing ?? Promise.resolve();
    const rows = this.pending;
    const dropped = this.dropped;
    this.pending = [];
    this.dropped = 0;
    if (dropped > 0) this.logger.warn({ dropped }, 'refused requests not recorded: too many at once');
    const write = { name: 'refusals.record', body: () => insertRows('generations', GENERATION_COLUMNS, rows) };
    this.flushing = this.store.db
      .tx((t) => driveAsync(write, undefined, t))
      .catch((e: unknown) => this.logger.error({ err: e, records: rows.length }, 'recording refused requests failed'))
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }
}
