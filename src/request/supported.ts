import type { ModelConfig } from '../config/types';
import { getAdapter, providerTypeNames } from '../providers/registry';
import { chatRequestSchema } from './schema';

/** Fields every request may carry whatever the provider: they are not parameters. */
const ALWAYS = new Set(['model', 'messages', 'stream', 'stream_options']);

/** Every field the spec defines plus every provider-specific one some adapter declares: candidates for dropping. */
export function knownParams(): Set<string> {
  const known = new Set(Object.keys(chatRequestSchema.properties));
  for (const t of providerTypeNames()) for (const p of getAdapter(t).supportedParams) known.add(p);
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
