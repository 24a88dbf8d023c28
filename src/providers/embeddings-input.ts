import { errors } from '../errors';
import type { EmbeddingsRequest } from '../types/embeddings';

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
