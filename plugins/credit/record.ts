import type { AttemptRecord, GatewayContext, Generation, Usage } from '../../src/plugin';

/** The attempt log worth keeping: null for the usual one call that answered (its provider and deployment say it). */
function attemptLog(attempts: readonly AttemptRecord[]): string | null {
  if (attempts.length === 0 || (attempts.length === 1 && attempts[0].status === 'ok')) return null;
  return JSON.stringify(
    attempts.map((a) => ({
      provider: a.provider,
      deployment: a.deployment,
      model: a.model,
      status: a.status,
      ...(a.error ? { code: a.error.code } : {}),
      ...(a.guard ? { guard: a.guard } : {}),
    })),
  );
}

function header(ctx: GatewayContext, name: string): string | null {
  const v = ctx.get(name);
  return v ? v.slice(0, 500) : null;
}

/** What a finished request produced and is charged, for its generation record. */
export interface Outcome {
  usage: Usage | null;
  cost: number;
  finishReason: string | null;
  streamed: boolean;
  cancelled: boolean;
  status: Generation['status'];
  errorCode: string | null;
  firstContentAt: bigint | null;
  /** Zero-completion insurance: no output and a failure or empty finish, so nothing was charged (insurance.ts). */
  insured?: boolean;
}

/** The generation record of a finished request, from the request state and what it produced. */
export function buildGeneration(ctx: GatewayContext, out: Outcome): Generation {
  const s = ctx.state.gateway;
  // The attempt that answered, or the last one made (a guard's refusal reached no provider).
  let last: AttemptRecord | undefined;
  for (let i = s.attempts.length - 1; i >= 0 && !last; i--)
    if (s.attempts[i].status !== 'skipped') last = s.attempts[i];
  const now = process.hrtime.bigint();
  const metadata = s.options.metadata;
  return {
    id: s.completionId,
    accountId: s.principal?.accountId ?? 'anonymous',
    keyHash: s.principal?.keyHash ?? null,
    model: s.model.id,
    provider: last?.provider ?? null,
    deployment: last?.deployment ?? null,
    promptTokens: out.usage?.prompt_tokens ?? 0,
    completionTokens: out.usage?.completion_tokens ?? 0,
    cachedTokens: out.usage?.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: out.usage?.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoningTokens: out.usage?.completion_tokens_details?.reasoning_tokens ?? 0,
    cost: out.cost,
    latencyMs: Number(now - s.startedAt) / 1e6,
    ttftMs: out.firstContentAt === null ? null : Number(out.firstContentAt - s.startedAt) / 1e6,
    finishReason: out.finishReason,
    streamed: out.streamed,
    cancelled: out.cancelled,
    status: out.status,
    errorCode: out.errorCode,
    appReferer: header(ctx, 'http-referer'),
    appTitle: header(ctx, 'x-title') ?? header(ctx, 'x-openrouter-title'),
    user: typeof s.request.user === 'string' ? s.request.user.slice(0, 256) : null,
    metadata: metadata && typeof metadata === 'object' && !Array.isArray(metadata) ? metadata : null,
    createdAt: Date.now(),
    attempts: attemptLog(s.attempts),
    cache: s.cache?.status ?? null,
    cacheEntry: s.cache?.entry ?? null,
    cacheSimilarity: s.cache?.similarity ?? null,
    variant: s.variant ?? null,
    insured: out.insured === true,
    guardrails: s.guardrails && s.guardrails.length > 0 ? JSON.stringify(s.guardrails) : null,
  };
}
