import { errors } from '../errors';
import type { EmbeddingsRequest } from '../types/embeddings';
import type { UpstreamTarget } from './types';

/** The inputs as text: providers other than OpenAI's take no token arrays (400 naming the provider). */
export function textInputs(req: EmbeddingsRequest, provider: string): string[] {
  if (req.input.some((x) => typeof x !== 'string')) {
    throw errors.invalidRequest(
      `Provider '${provider}' takes text input for embeddings, not token arrays`,
      'input',
      'unsupported_input',
    );
  }
  return req.input as string[];
}

/** A list of numbers, or null. */
export function numberList(v: unknown): number[] | null {
  return Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : null;
}

/** Each item's vector (`pick` finds it), or the upstream broke the protocol: `what` says how. */
export function vectorsOf(
  list: unknown[],
  provider: string,
  pick: (item: unknown) => unknown = (item) => item,
  what = 'an embedding was not a list of numbers',
): number[][] {
  return list.map((item) => {
    const v = numberList(pick(item));
    if (!v) throw errors.upstreamProtocol(provider, what);
    return v;
  });
}

/** The body of a text-only embeddings API: the model, the texts under `input`, `dimensions` under `dims` if asked. */
export function textEmbeddingsBody(
  req: EmbeddingsRequest,
  target: UpstreamTarget,
  input: string,
  dims: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: target.deployment.model,
    [input]: textInputs(req, target.provider.name),
  };
  Object.assign(body, extra);
  if (req.dimensions !== undefined) body[dims] = req.dimensions;
  return body;
}
