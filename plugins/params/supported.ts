import { getAdapter, providerTypeNames, supportedParamsOf, type ChatRequest, type ModelConfig } from '../../src/plugin';
import { chatRequestSchema } from './request-schema';

/** Fields every request may carry whatever the provider: they are not parameters. */
const ALWAYS = new Set(['model', 'messages', 'stream', 'stream_options']);

/** Every field the spec defines plus every provider-specific one some adapter declares: candidates for dropping. */
export function knownParams(): Set<string> {
  const known = new Set(Object.keys(chatRequestSchema.properties));
  for (const t of providerTypeNames()) for (const p of supportedParamsOf(t)) known.add(p);
  for (const a of ALWAYS) known.delete(a);
  return known;
}

/**
 * The parameters a model accepts: its config's `supported_params`, else what every one
 * of its deployments' provider types accepts (a parameter one of them cannot take would
 * change the answer depending on which deployment serves it).
 */
export function modelParams(m: ModelConfig, providerType: (provider: string) => string): Set<string> {
  if (Array.isArray(m.supported_params)) return new Set(m.supported_params as string[]);
  let out: Set<string> | undefined;
  for (const d of m.deployments) {
    const accepted = new Set<string>(getAdapter(providerType(d.provider)).supportedParams);
    const prev: Set<string> | undefined = out;
    out = prev === undefined ? accepted : new Set([...prev].filter((p) => accepted.has(p)));
  }
  return out ?? new Set<string>();
}

/**
 * Whether every deployment of a model sends body fields no adapter knows on as they are (OpenAI-compatible upstreams).
 */
export function forwardsUnknown(m: ModelConfig, providerType: (provider: string) => string): boolean {
  return m.deployments.every((d) => {
    const a = getAdapter(providerType(d.provider));
    return a.kind === 'http' && a.forwardsUnknownParams === true;
  });
}

/**
 * The fields of a request a model cannot take: parameters it does not accept, values one of
 * its providers cannot honour (Ollama's tool_choice "required"), and fields no adapter knows
 * when one of its providers would silently leave them out. Named, in the body's order.
 */
export function unsupportedFields(
  r: ChatRequest,
  known: Set<string>,
  accepted: Set<string>,
  forwards: boolean,
  valueChecks: Array<(req: ChatRequest) => string[]>,
): string[] {
  const byValue = new Set(valueChecks.flatMap((check) => check(r)));
  return Object.keys(r).filter((k) => {
    if (r[k] === undefined || ALWAYS.has(k)) return false;
    if (known.has(k)) return !accepted.has(k) || byValue.has(k);
    return !forwards;
  });
}

/** Value checks of the adapters serving a model. */
export function valueChecks(
  m: ModelConfig,
  providerType: (provider: string) => string,
): Array<(req: ChatRequest) => string[]> {
  return m.deployments.flatMap((d) => {
    const a = getAdapter(providerType(d.provider));
    return a.kind === 'http' && a.unsupportedValues ? [a.unsupportedValues] : [];
  });
}
