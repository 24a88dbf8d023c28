/**
 * @module
 * OpenRouter's `provider` object (and the `:floor` / `:nitro` variants), read once per request and applied to each
 * model's deployments as the plan is made: which may serve (`only`, `ignore`, `data_collection`, `max_price`), in what
 * order (`order` first, then `sort`), and whether any other may (`allow_fallbacks`). docs/reference/routing-fields.md.
 */
import type { ProviderPreferences } from '../config/types';
import { errors, GatewayError } from '../errors';

export type SortBy = NonNullable<ProviderPreferences['sort']>;

/** The variants a request may name (`model:floor`) and the sort each stands for, as on OpenRouter. */
export const VARIANT_SORT: Readonly<Record<string, SortBy>> = { floor: 'price', nitro: 'throughput' };

/** A request's provider preferences, checked: the lists as sets, the prices per token. */
export interface Preferences {
  order: readonly string[] | null;
  only: ReadonlySet<string> | null;
  ignore: ReadonlySet<string> | null;
  allowFallbacks: boolean;
  denyDataCollection: boolean;
  sort: SortBy | null;
  /** Credits per token (prompt, completion) and per request; the request's per-million figures divided. */
  maxPrice: { prompt?: number; completion?: number; request?: number } | null;
  /** What the client sent, for the error that says why nothing matched. */
  raw: Record<string, unknown>;
}

/** Fields we honour, and OpenRouter's we accept only in the form that asks nothing (false, empty). */
const HONOURED = new Set([
  'order',
  'only',
  'ignore',
  'allow_fallbacks',
  'require_parameters',
  'data_collection',
  'sort',
  'max_price',
]);
const ASK_NOTHING: Record<string, (v: unknown) => boolean> = {
  zdr: (v) => v === false || v === null,
  enforce_distillable_text: (v) => v === false || v === null,
  quantizations: (v) => v === null || (Array.isArray(v) && v.length === 0),
  // Preferences, not requirements, on OpenRouter too: accepted, not acted on.
  preferred_min_throughput: () => true,
  preferred_max_latency: () => true,
};
const SORTS: ReadonlySet<string> = new Set(['price', 'throughput', 'latency']);

const bad = (param: string, message: string, code: 'invalid_type' | 'invalid_value' = 'invalid_type') =>
  errors.invalidRequest(message, `provider.${param}`, code);

function nameList(v: unknown, field: string, known: (name: string) => boolean, unknown: string[]): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string') || v.length > 64)
    throw bad(field, `provider.${field} must be an array of at most 64 provider names`);
  for (const n of v as string[]) if (!known(n) && !unknown.includes(n)) unknown.push(n);
  return v as string[];
}

function readSort(v: unknown): SortBy | null {
  if (v === undefined || v === null) return null;
  // OpenRouter also takes {by, partition}: the partition is across models, one order for all of ours.
  const by = typeof v === 'object' && !Array.isArray(v) ? (v as { by?: unknown }).by : v;
  if (typeof by !== 'string' || !SORTS.has(by))
    throw bad('sort', 'provider.sort must be "price", "throughput" or "latency"', 'invalid_value');
  return by as SortBy;
}

function readMaxPrice(v: unknown): Preferences['maxPrice'] {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad('max_price', 'provider.max_price must be an object');
  const out: NonNullable<Preferences['maxPrice']> = {};
  for (const [k, n] of Object.entries(v as Record<string, unknown>)) {
    if (!['prompt', 'completion', 'request', 'image', 'audio'].includes(k))
      throw bad(`max_price.${k}`, `provider.max_price.${k} is not a price this gateway knows`, 'invalid_value');
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0)
      throw bad(`max_price.${k}`, `provider.max_price.${k} must be a non-negative number`);
    // Per million tokens, as OpenRouter's; `request` is per request. No deployment has an image or audio price.
    if (k === 'prompt' || k === 'completion') out[k] = n / 1e6;
    else if (k === 'request') out.request = n;
  }
  return out;
}

/**
 * The request's preferences (its `provider` object, with the variant's sort when it sets none), or null when it
 * asks for nothing routing acts on. A field we cannot honour, a wrong type or a provider name the gateway does not
 * have is a 400 naming it.
 */
export function readPreferences(
  raw: unknown,
  variant: string | undefined,
  known: (name: string) => boolean,
): Preferences | null {
  const variantSort = variant === undefined ? null : (VARIANT_SORT[variant] ?? null);
  if ((raw === undefined || raw === null) && variantSort === null) return null;
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw)))
    throw errors.invalidRequest('provider must be an object', 'provider', 'invalid_type');
  const p = (raw ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(p))
    if (!HONOURED.has(k) && !(ASK_NOTHING[k]?.(p[k]) ?? false))
      throw errors.invalidRequest(
        `provider.${k.slice(0, 64)} is not honoured by this gateway (docs/reference/routing-fields.md)`,
        `provider.${k.slice(0, 64)}`,
        'unsupported_preference',
      );
  const unknown: string[] = [];
  const list = (f: 'order' | 'only' | 'ignore') => (p[f] == null ? null : nameList(p[f], f, known, unknown));
  const order = list('order');
  const only = list('only');
  const ignore = list('ignore');
  if (unknown.length > 0)
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'unknown_provider',
      param: 'provider',
      message: `provider names unknown provider(s): ${unknown.map((n) => `'${n.slice(0, 64)}'`).join(', ')}`,
    });
  for (const f of ['allow_fallbacks', 'require_parameters'] as const)
    if (p[f] != null && typeof p[f] !== 'boolean') throw bad(f, `provider.${f} must be a boolean`);
  if (p.data_collection != null && p.data_collection !== 'allow' && p.data_collection !== 'deny')
    throw bad('data_collection', 'provider.data_collection must be "allow" or "deny"', 'invalid_value');
  return {
    order,
    only: only && new Set(only),
    ignore: ignore && new Set(ignore),
    allowFallbacks: p.allow_fallbacks !== false,
    denyDataCollection: p.data_collection === 'deny',
    sort: readSort(p.sort) ?? variantSort,
    maxPrice: readMaxPrice(p.max_price),
    raw: p,
  };
}
