/**
 * @module
 * The metrics plugin's step on the chat chain, first in it: counts each request around the plugins after it (its
 * attempts, latency, tokens and credits; a stream's when it ends).
 */
import {
  chunkCount,
  nowMs,
  toGatewayError,
  type StreamObserver,
  type GatewayContext,
  type GatewayState,
  type Next,
  type Usage,
} from '../../src/plugin';
import { statusClass, type Instruments } from './metrics';

/** The request, by model, the provider of its last attempt, status class, streamed and (when asked) key prefix. */
function countRequest(
  m: Instruments,
  keyLabel: boolean,
  s: GatewayState,
  model: string,
  streamed: string,
  status: number,
): void {
  const provider = s.attempts[s.attempts.length - 1]?.provider ?? 'none';
  const series = keyLabel
    ? m.requests.with(model, provider, statusClass(status), streamed, s.principal?.keyHash.slice(0, 12) ?? 'none')
    : m.requests.with(model, provider, statusClass(status), streamed);
  series.inc();
}

/** Each attempt by provider and outcome; the retries, the key's extra attempts and a fallback that answered. */
function countAttempts(m: Instruments, s: GatewayState, model: string): void {
  let made = 0;
  for (const a of s.attempts) {
    m.attempts.with(a.provider, a.status).inc();
    if (a.status === 'ok') m.upstream.with(a.provider).observe(a.latencyMs / 1000);
    else if (a.status === 'error' && a.error) m.upstreamErrors.inc({ provider: a.provider, code: a.error.code });
    if (a.status !== 'skipped') made++;
  }
  if (made > 1) m.retries.inc({ model }, made - 1);
  if (s.attempts.length > 1 && s.principal)
    m.keyExtraAttempts.inc({ key: s.principal.keyHash.slice(0, 12) }, s.attempts.length - 1);
  const served = s.attempts[s.attempts.length - 1];
  if (served?.status === 'ok' && served.model !== model) m.fallbacks.inc({ model });
}

function countTokens(m: Instruments, model: string, u: Usage): void {
  m.tokens.with(model, 'prompt').inc(u.prompt_tokens);
  m.tokens.with(model, 'completion').inc(u.completion_tokens);
  m.tokens.with(model, 'cached').inc(u.prompt_tokens_details?.cached_tokens ?? 0);
  m.tokens.with(model, 'reasoning').inc(u.completion_tokens_details?.reasoning_tokens ?? 0);
}

/** A stream's observer: the gaps between its chunks and its credits as they come; the rest when it ends. */
function streamObserver(
  m: Instruments,
  keyLabel: boolean,
  s: GatewayState,
  model: string,
  streamed: string,
): StreamObserver {
  let last = 0;
  // Looked up once a stream, not once a chunk.
  const gaps = m.interToken.with(model);
  return {
    name: 'metrics',
    readOnly: true,
    onChunk: (chunk) => {
      const now = nowMs();
      if (last !== 0 && chunk.choices.length > 0) gaps.observe((now - last) / 1000);
      // A run of chunks (one chunk to a read-only observer) came in one read: no time between them.
      const n = chunkCount(chunk);
      if (n > 1 && chunk.choices.length > 0) gaps.observe(0, n - 1);
      last = now;
      const u = chunk.choices.length === 0 ? chunk.usage : null;
      if (u && typeof u.cost === 'number') m.credits.with(model).inc(u.cost);
    },
    onEnd: (end) => {
      m.inFlight.dec();
      m.openStreams.dec();
      countRequest(m, keyLabel, s, model, streamed, end.error ? end.error.status : end.cancelled ? 499 : 200);
      m.duration.with(model, streamed).observe(Number(end.endedAt - s.startedAt) / 1e9);
      if (end.firstContentAt !== null) m.ttft.with(model).observe(Number(end.firstContentAt - s.startedAt) / 1e9);
      if (end.usage) countTokens(m, model, end.usage);
    },
  };
}

export function metricsMiddleware(m: Instruments, keyLabel: boolean) {
  return async function metrics(ctx: GatewayContext, next: Next): Promise<void> {
    const s = ctx.state.gateway;
    const model = s.model.id;
    const streamed = s.request.stream === true ? 'true' : 'false';
    m.inFlight.inc();
    try {
      await next();
    } catch (e) {
      m.inFlight.dec();
      countAttempts(m, s, model);
      countRequest(m, keyLabel, s, model, streamed, toGatewayError(e).status);
      throw e;
    }
    const ready = Number(process.hrtime.bigint() - s.startedAt) / 1e9;
    m.added.with(model).observe(Math.max(0, ready - s.upstreamMs / 1000));
    countAttempts(m, s, model);
    const result = s.result;
    if (result?.kind !== 'stream') {
      m.inFlight.dec();
      countRequest(m, keyLabel, s, model, streamed, 200);
      m.duration.with(model, streamed).observe(ready);
      const u = result?.kind === 'embeddings' ? { ...result.body.usage, completion_tokens: 0 } : result?.body.usage;
      if (u) {
        countTokens(m, model, u);
        if (typeof u.cost === 'number') m.credits.with(model).inc(u.cost);
      }
      return;
    }
    m.openStreams.inc();
    result.stream.observe(streamObserver(m, keyLabel, s, model, streamed));
  };
}
