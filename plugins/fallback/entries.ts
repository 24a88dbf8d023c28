import {
  combine,
  countPromptTokens,
  errors,
  GATEWAY_FIELDS,
  GatewayError,
  ownSafeKeys,
  PROTOTYPE_KEYS,
  type ChatRequest,
  type ModelConfig,
  type ValidateChatRequest,
} from '../../src/plugin';

/** Fields a fallback entry may not set: the gateway's own, and stream (routing reads it from the request once). */
const NOT_OVERRIDABLE: ReadonlySet<string> = new Set([...GATEWAY_FIELDS, 'stream', 'stream_options']);

/**
 * The parameter overrides of a `fallbacks` entry `{model, ...overrides}`, copied key by key
 * (never a prototype key). Gateway fields (api_key, fallbacks, metadata, ...) cannot be set
 * per fallback (they would reach the upstream as body fields), nor can stream.
 */
export function entryOverrides(entry: Record<string, unknown>, i: number): Record<string, unknown> {
  const problems: GatewayError[] = [];
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(entry)) {
    if (k === 'model') continue;
    if (PROTOTYPE_KEYS.has(k) || NOT_OVERRIDABLE.has(k))
      problems.push(
        errors.invalidRequest(`'${k}' cannot be set in a fallback entry`, `fallbacks[${i}].${k}`, 'invalid_fallback'),
      );
  }
  if (problems.length > 0) throw combine(problems);
  for (const k of ownSafeKeys(entry)) if (k !== 'model') out[k] = entry[k];
  return out;
}

/**
 * A fallback's request (the request with the entry's overrides) checked with the same
 * compiled schema as the request itself (the params plugin's `validate`, when it is in the chain); problems of the
 * overridden fields are named `fallbacks[i].<field>` (the rest of the request is the params plugin's to report).
 */
export function checkFallbackRequest(
  validate: ValidateChatRequest | undefined,
  request: ChatRequest,
  overrides: Record<string, unknown>,
  i: number,
  model: ModelConfig,
): void {
  const keys = Object.keys(overrides);
  if (keys.length === 0 || validate === undefined) return;
  const mine = (param: string | null) =>
    param !== null && keys.some((k) => param === k || param.startsWith(`${k}.`) || param.startsWith(`${k}[`));
  const problems = validate(request, {}, () => model.context_length - countPromptTokens(request))
    .filter((p) => mine(p.param))
    .map((p) => errors.invalidRequest(`fallbacks[${i}].${p.message}`, `fallbacks[${i}].${p.param}`, p.code));
  if (problems.length > 0) throw combine(problems);
}
