/**
 * @module
 * The model a request names, when it is not a configured id as it stands: a preset (`model: "@preset/<name>"` or
 * `preset: "<name>"`) applied to the request, then a variant suffix (`model:floor`, `model:nitro`) taken off. What it
 * resolves to is an ordinary configured model: allowlists, limits and credit apply to it as to any other.
 */
import type { ModelConfig, PresetConfig } from '../config/types';
import { errors } from '../errors';
import { VARIANT_SORT } from '../deployments/preferences';
import type { ModelRegistry } from './registry';
import type { PresetBook } from './presets';
import type { GatewayRequestOptions } from '../pipeline/state';
import type { ChatRequest } from '../types/openai';
import { PROTOTYPE_KEYS } from '../api/chat-request';

const PRESET_PREFIX = '@preset/';

export interface ResolvedModel {
  model: ModelConfig;
  variant?: string;
}

/** Preset defaults under the request's own fields: the request wins field by field (provider: key by key). */
function applyPreset(p: PresetConfig, request: ChatRequest, options: GatewayRequestOptions, byName: boolean): void {
  const r = request as unknown as Record<string, unknown>;
  if (byName) r.model = p.model ?? p.models?.[0];
  if (p.models && options.models === undefined) options.models = [...p.models];
  if (p.provider) {
    const own = options.provider;
    options.provider =
      own && typeof own === 'object' && !Array.isArray(own) ? { ...p.provider, ...own } : (own ?? { ...p.provider });
  }
  for (const [k, v] of Object.entries(p.params ?? {}))
    if (!PROTOTYPE_KEYS.has(k) && r[k] === undefined && options[k] === undefined) r[k] = v;
  if (p.system !== undefined && Array.isArray(request.messages) && !request.messages.some((m) => m.role === 'system'))
    request.messages = [{ role: 'system', content: p.system }, ...request.messages];
}

/** The preset a request names, applied to it (404-like 400 when there is none by that name). */
function presetFor(presets: PresetBook, request: ChatRequest, options: GatewayRequestOptions) {
  const byName = request.model.startsWith(PRESET_PREFIX);
  const name = byName ? request.model.slice(PRESET_PREFIX.length) : options.preset;
  if (typeof name !== 'string')
    throw errors.invalidRequest('preset must be the name of a preset', 'preset', 'invalid_type');
  const p = presets.get(name);
  if (!p)
    throw errors.invalidRequest(
      `There is no preset named '${name.slice(0, 64)}'`,
      byName ? 'model' : 'preset',
      'preset_not_found',
    );
  return { preset: p, byName };
}

/**
 * The configured model `request.model` names after its preset and variant, with `request.model` set to its id; a
 * variant this gateway cannot honour is a 400 naming it; an unknown model is the usual 404.
 */
export function resolveModel(
  models: ModelRegistry,
  presets: PresetBook,
  request: ChatRequest,
  options: GatewayRequestOptions,
  embeddings: boolean,
): ResolvedModel {
  if (options.preset !== undefined || request.model.startsWith(PRESET_PREFIX)) {
    const { preset, byName } = presetFor(presets, request, options);
    // An embeddings request takes a preset's model and provider preferences, not chat parameters or a system prompt.
    applyPreset(embeddings ? { ...preset, params: undefined, system: undefined } : preset, request, options, byName);
  }
  const id = request.model;
  const exact = models.get(id);
  if (exact) return { model: exact };
  const colon = id.lastIndexOf(':');
  const base = colon > 0 ? models.get(id.slice(0, colon)) : undefined;
  if (!base) throw errors.modelNotFound(id);
  const variant = id.slice(colon + 1);
  if (!Object.hasOwn(VARIANT_SORT, variant))
    throw errors.invalidRequest(
      `The model variant ':${variant.slice(0, 32)}' is not honoured by this gateway (only :floor and :nitro)`,
      'model',
      'unsupported_variant',
    );
  request.model = base.id;
  return { model: base, variant };
}
