/**
 * @module
 * The cache key: a SHA-256 digest of everything that changes the answer. The request as the chain sees it at this
 * point (the model after aliases and presets, messages, tools, tool_choice, every sampling and output field,
 * response_format, the gateway options that pick models or headers), the endpoint, and the account unless the scope
 * is global. Left out: what only changes how the answer is delivered or labelled (stream, stream_options, user,
 * metadata, store, the timeout), so a plain answer serves a streamed request and the other way round.
 */
import { createHash } from 'node:crypto';
import type { GatewayState } from '../../src/plugin';

/** Request fields that do not change the answer (delivery and labels). */
const NOT_ANSWER = new Set(['model', 'stream', 'stream_options', 'user', 'metadata', 'store']);
/** Gateway options that do not change the answer. */
const NOT_ANSWER_OPTIONS = new Set(['timeoutMs', 'metadata']);

/** Canonical JSON: object keys sorted, so that the same request in another key order has the same digest. */
export function canonical(v: unknown, skip?: ReadonlySet<string>): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => canonical(x)).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined && !skip?.has(k))
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
}

/** The digest of what the answer depends on; `account` is null for a global scope. */
export function cacheKey(s: GatewayState, account: string | null): string {
  const h = createHash('sha256');
  h.update(`v1\n${s.operation}\n${s.model.id}\n${account ?? '*'}\n`);
  h.update(canonical(s.operation === 'embeddings' ? s.embeddings : s.request, NOT_ANSWER));
  h.update('\n');
  h.update(canonical(s.options, NOT_ANSWER_OPTIONS));
  if (s.inbound) {
    // Another wire's own fields (Anthropic's thinking, top_k...) reach a same-wire upstream as they are.
    h.update('\n');
    h.update(canonical(s.inbound.body, NOT_ANSWER));
  }
  return h.digest('hex');
}

/**
 * Requests whose answer is not the same twice by nature: sampling above temperature 0 (or left to the upstream's
 * default, which is above 0), several choices, or tools (a call may act on the world). Cached only on models the
 * operator lists in `non_deterministic_models`.
 */
export function nonDeterministic(s: GatewayState): boolean {
  if (s.operation === 'embeddings') return false;
  const r = s.request;
  if ((r.n ?? 1) > 1) return true;
  if (r.tools && r.tools.length > 0) return true;
  return r.temperature === undefined || r.temperature > 0;
}
