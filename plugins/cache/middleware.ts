/**
 * @module
 * The cache plugin's step on the chat chain (after credit's reservation and storage, before routing): a request the
 * cache may serve is looked up by its key; a hit becomes the request's result at once (no upstream call, no attempt:
 * routing is never reached), a miss goes on and its answer is stored (a stream when it ends). `X-Gateway-Cache` says
 * which, and `state.cache` tells credit (a hit's charge), limits (release a hit's admission) and the record.
 */
import type { Logger } from 'pino';
import * as door from '../../src/plugin';
import type { CacheOutcome, GatewayContext, GatewayState, Next } from '../../src/plugin';
import type { CacheBackend, StoredEntry } from './backends/types';
import { resultOf, StreamAssembler, type Entry } from './entry';
import { cacheKey, nonDeterministic } from './key';
import type { CacheMetrics } from './metrics';
import { clientDirective, type ModelRules } from './policy';
import { embed, paramsKey, promptText, type SemanticConfig, type SemanticIndex } from './semantic';
import type { CacheSettings } from './store/settings';

// Read once, at load (a re-exported name is a getter): docs/decisions/0034.
const { deferWrite } = door;

export interface CacheDeps {
  rules: ModelRules;
  settings: CacheSettings;
  backend: CacheBackend;
  metrics: CacheMetrics;
  logger: Logger;
  /** Keys use the cache unless a setting says otherwise. */
  keysIn: boolean;
  /** null: one scope for every account (`scope: global`). */
  global: boolean;
  ttlMs: number;
  maxBytes: number;
  /** A hit's charge (GatewayState.cache.charge) and whether it counts against rate limits. */
  charge: number;
  countsLimits: boolean;
  /** The semantic cache, when some model has it. */
  semantic?: { config: SemanticConfig; index: SemanticIndex; on: (model: string) => boolean };
}

const HEADER = 'X-Gateway-Cache';
const BYPASS: CacheOutcome = Object.freeze({ status: 'bypass' });
const MISS: CacheOutcome = Object.freeze({ status: 'miss' });

function mark(s: GatewayState, outcome: CacheOutcome): void {
  s.cache = outcome;
  s.responseHeaders[HEADER] = outcome.status;
}

/** Whether this request may be looked up or stored at all. */
function eligible(d: CacheDeps, ctx: GatewayContext): boolean {
  const s = ctx.state.gateway;
  const rule = d.rules.of(s.model.id);
  if (!rule.on) return false;
  const p = s.principal;
  if (!(d.settings.enabledFor(p?.keyHash, p?.accountId) ?? d.keysIn)) return false;
  return rule.nonDeterministic || !nonDeterministic(s);
}

export function cacheMiddleware(d: CacheDeps) {
  const { backend, metrics, logger } = d;
  return async function cache(ctx: GatewayContext, next: Next): Promise<void> {
    const s = ctx.state.gateway;
    const directive = clientDirective(ctx.get('cache-control'));
    if (directive === 'no-store' || !eligible(d, ctx)) {
      mark(s, BYPASS);
      metrics.requests.inc({ model: s.model.id, result: 'bypass' });
      return next();
    }
    const account = s.principal?.accountId ?? 'anonymous';
    const key = cacheKey(s, d.global ? null : account);
    if (directive !== 'no-cache') {
      let text: string | undefined;
      try {
        text = await backend.get(key, Date.now());
      } catch (e) {
        metrics.skipped.inc({ reason: 'backend_error' });
        logger.warn({ err: e, requestId: s.requestId }, 'cache: read failed; answering from upstream');
      }
      if (text !== undefined) return hit(d, s, text, key);
    }
    const near = semanticFor(d, ctx, account);
    if (near && directive !== 'no-cache') {
      const found = await near.lookup();
      if (found) return hit(d, s, found.text, found.entry, found.similarity);
    }
    mark(s, directive === 'no-cache' ? BYPASS : MISS);
    metrics.requests.inc({ model: s.model.id, result: directive === 'no-cache' ? 'bypass' : 'miss' });
    await next();
    const entry = { key, accountId: account, keyHash: s.principal?.keyHash ?? null, model: s.model.id };
    await keep(d, s, entry);
    if (near && s.result) await near.remember(key);
  };
}

/** The request answered from an entry. */
function hit(d: CacheDeps, s: GatewayState, text: string, entry: string, similarity?: number): void {
  s.result = resultOf(text, s.completionId, s.request.stream === true);
  mark(s, { status: 'hit', entry, charge: d.charge, countsLimits: d.countsLimits, similarity });
  s.responseHeaders['X-Gateway-Attempts'] = '0';
  d.metrics.requests.inc({ model: s.model.id, result: 'hit' });
}

/**
 * The semantic half for a request whose model has it: `lookup` embeds the prompt (once) and reads the nearest entry
 * above the threshold; `remember` files this request's vector under the entry its answer was stored as. A failed
 * embedding is a miss, logged.
 */
function semanticFor(d: CacheDeps, ctx: GatewayContext, account: string) {
  const sem = d.semantic;
  const s = ctx.state.gateway;
  if (!sem || s.operation === 'embeddings' || !sem.on(s.model.id)) return undefined;
  const params = paramsKey(s, d.global ? null : account);
  let vector: Promise<Float32Array | undefined> | undefined;
  const vectorOf = () =>
    (vector ??= embed(ctx, sem.config, promptText(s)).catch((e: unknown) => {
      d.metrics.skipped.inc({ reason: 'embedding_error' });
      d.logger.warn({ err: e, requestId: s.requestId }, 'cache: the prompt was not embedded; no semantic lookup');
      return undefined;
    }));
  return {
    async lookup(): Promise<{ text: string; entry: string; similarity: number } | undefined> {
      const v = await vectorOf();
      const near = v && sem.index.nearest(params, v, sem.config.threshold, Date.now());
      if (!near) return undefined;
      const text = await d.backend.get(near.entry, Date.now()).catch(() => undefined);
      return text === undefined ? undefined : { text, ...near };
    },
    async remember(entry: string): Promise<void> {
      const v = await vectorOf();
      if (v) sem.index.add(params, v, entry, Date.now() + d.ttlMs);
    },
  };
}

type EntryHead = Pick<StoredEntry, 'key' | 'accountId' | 'keyHash' | 'model'>;

/** A miss's answer stored: a plain one now (before the plugins outside edit it), a stream when it ends whole. */
function keep(d: CacheDeps, s: GatewayState, head: EntryHead): Promise<void> | undefined {
  const r = s.result;
  if (!r) return undefined;
  if (r.kind === 'embeddings') return save(d, s, head, { kind: 'embeddings', body: r.body });
  if (r.kind === 'completion')
    return answered(r.body.choices) ? save(d, s, head, { kind: 'completion', body: r.body }) : undefined;
  const assembler = new StreamAssembler();
  r.stream.observe({
    name: 'cache',
    // Registered first (nearest routing): the upstream's chunks, before any plugin outside edits them.
    onChunk: (chunk) => assembler.push(chunk),
    onEnd: (end) => {
      if (end.error || end.cancelled) return;
      const body = assembler.completion();
      if (!body || !answered(body.choices)) return;
      if (!body.usage && end.usage) body.usage = { ...end.usage };
      return save(d, s, head, { kind: 'completion', body });
    },
  });
  return undefined;
}

/** Every choice finished as a model finishes (not cut by an error). */
function answered(choices: ReadonlyArray<{ finish_reason: string | null }>): boolean {
  return choices.length > 0 && choices.every((c) => c.finish_reason !== null && c.finish_reason !== 'error');
}

function save(d: CacheDeps, s: GatewayState, head: EntryHead, entry: Entry): Promise<void> | undefined {
  const text = JSON.stringify(entry);
  if (Buffer.byteLength(text) > d.maxBytes) {
    d.metrics.skipped.inc({ reason: 'too_large' });
    return undefined;
  }
  const now = Date.now();
  const e: StoredEntry = { ...head, operation: s.operation, text, createdAt: now, expiresAt: now + d.ttlMs };
  // With credit in the chain: in the request's settlement transaction (no write of its own).
  if (d.backend.putWrite && deferWrite(s.extensions, d.backend.putWrite(e))) return undefined;
  return d.backend.put(e).catch((err: unknown) => {
    d.metrics.skipped.inc({ reason: 'backend_error' });
    d.logger.warn({ err, requestId: s.requestId }, 'cache: write failed; the answer is not cached');
  });
}
