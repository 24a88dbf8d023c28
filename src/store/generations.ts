import type { Db, Param } from './db';
import { fromNano, num, numOrNull } from './money';

/** One request's record (id = the completion id). */
export interface Generation {
  id: string;
  accountId: string;
  keyHash: string | null;
  model: string;
  provider: string | null;
  deployment: string | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Prompt tokens written to the provider's cache (usage.prompt_tokens_details.cache_write_tokens). */
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** nano-credits */
  cost: number;
  latencyMs: number | null;
  ttftMs: number | null;
  finishReason: string | null;
  streamed: boolean;
  cancelled: boolean;
  status: 'completed' | 'incomplete' | 'error';
  errorCode: string | null;
  appReferer: string | null;
  appTitle: string | null;
  user: string | null;
  metadata: Record<string, unknown> | null;
  createdAt: number;
  /**
   * The request's attempts as JSON text (`[{provider, deployment, model, status, code?, guard?}]`) when it made more
   * than one or any did not answer (a retry, a fallback, an attempt a guard refused); null for one answered call.
   */
  attempts?: string | null;
  /** What the response cache did (`hit`, `miss`, `bypass`); null when the cache plugin is not in the chain. */
  cache?: 'hit' | 'miss' | 'bypass' | null;
  /** A hit: the cache entry served (the digest of its key). */
  cacheEntry?: string | null;
  /** A semantic hit: the similarity of the prompt to the matched entry's. */
  cacheSimilarity?: number | null;
  /** The model variant the request named (`floor`, `nitro`), or null. */
  variant?: string | null;
  /** Zero-completion insurance: no output and a failure or empty finish, so nothing was charged. */
  insured?: boolean;
  /** What guardrails did (JSON text: `[{rule, side, action, count}]`, never a matched value); null when nothing. */
  guardrails?: string | null;
  /** The HTTP status of a refused request's light record (4xx, written by the outer error writer); else null. */
  httpStatus?: number | null;
}

/** The columns of a generation record as generationParams gives them. */
export const GENERATION_COLUMNS = [
  'id',
  'account_id',
  'key_hash',
  'model',
  'provider',
  'deployment',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'cost',
  'latency_ms',
  'ttft_ms',
  'finish_reason',
  'streamed',
  'cancelled',
  'status',
  'error_code',
  'app_referer',
  'app_title',
  'end_user',
  'metadata',
  'created_at',
  'cache_write_tokens',
  'attempts',
  'cache',
  'cache_entry',
  'cache_similarity',
  'variant',
  'insured',
  'guardrails',
  'http_status',
] as const;

export const GENERATION_INSERT =
  `INSERT INTO generations (${GENERATION_COLUMNS.join(', ')}) ` +
  `VALUES (${GENERATION_COLUMNS.map(() => '?').join(', ')})`;

export function generationParams(g: Generation): Param[] {
  return [
    g.id,
    g.accountId,
    g.keyHash,
    g.model,
    g.provider,
    g.deployment,
    g.promptTokens,
    g.completionTokens,
    g.cachedTokens,
    g.reasoningTokens,
    g.cost,
    g.latencyMs,
    g.ttftMs,
    g.finishReason,
    g.streamed ? 1 : 0,
    g.cancelled ? 1 : 0,
    g.status,
    g.errorCode,
    g.appReferer,
    g.appTitle,
    g.user,
    g.metadata ? JSON.stringify(g.metadata) : null,
    g.createdAt,
    g.cacheWriteTokens,
    g.attempts ?? null,
    g.cache ?? null,
    g.cacheEntry ?? null,
    g.cacheSimilarity ?? null,
    g.variant ?? null,
    g.insured ? 1 : null,
    g.guardrails ?? null,
    g.httpStatus ?? null,
  ];
}

type Row = Record<string, unknown>;

function toGeneration(r: Row): Generation {
  return {
    id: r.id as string,
    accountId: r.account_id as string,
    keyHash: (r.key_hash as string | null) ?? null,
    model: r.model as string,
    provider: (r.provider as string | null) ?? null,
    deployment: (r.deployment as string | null) ?? null,
    promptTokens: num(r.prompt_tokens),
    completionTokens: num(r.completion_tokens),
    cachedTokens: num(r.cached_tokens),
    cacheWriteTokens: num(r.cache_write_tokens),
    reasoningTokens: num(r.reasoning_tokens),
    cost: num(r.cost),
    latencyMs: numOrNull(r.latency_ms),
    ttftMs: numOrNull(r.ttft_ms),
    finishReason: (r.finish_reason as string | null) ?? null,
    streamed: num(r.streamed) === 1,
    cancelled: num(r.cancelled) === 1,
    status: r.status as Generation['status'],
    errorCode: (r.error_code as string | null) ?? null,
    appReferer: (r.app_referer as string | null) ?? null,
    appTitle: (r.app_title as string | null) ?? null,
    user: (r.end_user as string | null) ?? null,
    metadata: r.metadata ? (JSON.parse(r.metadata as string) as Record<string, unknown>) : null,
    createdAt: num(r.created_at),
    attempts: (r.attempts as string | null) ?? null,
    cache: (r.cache as Generation['cache']) ?? null,
    cacheEntry: (r.cache_entry as string | null) ?? null,
    cacheSimilarity: numOrNull(r.cache_similarity),
    variant: (r.variant as string | null) ?? null,
    insured: num(r.insured) === 1,
    guardrails: (r.guardrails as string | null) ?? null,
    httpStatus: numOrNull(r.http_status),
  };
}

/** The API form of a record. */
export function generationJson(g: Generation) {
  return {
    id: g.id,
    model: g.model,
    provider: g.provider,
    deployment: g.deployment,
    tokens_prompt: g.promptTokens,
    tokens_completion: g.completionTokens,
    tokens_cached: g.cachedTokens,
    tokens_cache_write: g.cacheWriteTokens,
    tokens_reasoning: g.reasoningTokens,
    total_cost: fromNano(g.cost),
    latency_ms: g.latencyMs,
    time_to_first_token_ms: g.ttftMs,
    finish_reason: g.finishReason,
    streamed: g.streamed,
    cancelled: g.cancelled,
    status: g.status,
    error_code: g.errorCode,
    app: { referer: g.appReferer, title: g.appTitle },
    user: g.user,
    metadata: g.metadata,
    created_at: new Date(g.createdAt).toISOString(),
    attempts: g.attempts ? (JSON.parse(g.attempts) as unknown[]) : null,
    // Only with the cache plugin: a record without it reads as before.
    ...(g.cache
      ? { cache: g.cache, cache_entry: g.cacheEntry ?? null, cache_similarity: g.cacheSimilarity ?? null }
      : {}),
    variant: g.variant ?? null,
    insured: g.insured === true,
    ...(g.guardrails ? { guardrails: JSON.parse(g.guardrails) as unknown[] } : {}),
  };
}

export class GenerationRepo {
  constructor(private readonly db: Db) {}

  private committed = 0;

  /**
   * Generation records this process has committed so far, as their writer (the credit plugin's settlements) counts
   * them: on SQLite the only ones the store gets, so a reader (the console's roll-up) knows when nothing is new.
   */
  get recorded(): number {
    return this.committed;
  }

  /** The writer committed a record (see `recorded`). */
  noteRecorded(): void {
    this.committed++;
  }

  async get(id: string): Promise<Generation | undefined> {
    const r = await this.db.get<Row>('SELECT * FROM generations WHERE id = ?', [id]);
    return r ? toGeneration(r) : undefined;
  }

  async list(opts: { accountId?: string; since?: number; user?: string; limit: number }): Promise<Generation[]> {
    const where: string[] = [];
    const params: Param[] = [];
    if (opts.accountId) {
      where.push('account_id = ?');
      params.push(opts.accountId);
    }
    if (opts.since !== undefined) {
      where.push('created_at >= ?');
      params.push(opts.since);
    }
    if (opts.user) {
      where.push('end_user = ?');
      params.push(opts.user);
    }
    params.push(opts.limit);
    return (
      await this.db.all<Row>(
        `SELECT * FROM generations ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ` +
          'ORDER BY created_at DESC LIMIT ?',
        params,
      )
    ).map(toGeneration);
  }

  /** When the oldest generation record was made (ms), or null when there is none. */
  async oldest(): Promise<number | null> {
    return numOrNull((await this.db.get<{ at: unknown }>('SELECT MIN(created_at) AS at FROM generations'))?.at);
  }

  /** Delete up to `batch` records created before `before` (retention); returns how many. */
  async deleteOlderThan(before: number, batch: number): Promise<number> {
    return (
      await this.db.run(
        'DELETE FROM generations WHERE id IN (SELECT id FROM generations WHERE created_at < ? LIMIT ?)',
        [before, batch],
      )
    ).changes;
  }

  /** Apps by tokens and requests since a time, with per-model rows (rankings). */
  async rankings(
    since: number,
  ): Promise<Array<{ referer: string | null; title: string | null; model: string; requests: number; tokens: number }>> {
    const rows = await this.db.all<Row>(
      'SELECT app_referer, app_title, model, COUNT(*) AS requests, SUM(prompt_tokens + completion_tokens) AS tokens ' +
        'FROM generations WHERE created_at >= ? GROUP BY app_referer, app_title, model ORDER BY tokens DESC',
      [since],
    );
    return rows.map((r) => ({
      referer: (r.app_referer as string | null) ?? null,
      title: (r.app_title as string | null) ?? null,
      model: r.model as string,
      requests: num(r.requests),
      tokens: num(r.tokens),
    }));
  }
}
