import type { EmbeddingsRequest, EmbeddingsResponse, EmbeddingsResult } from '../../types/embeddings';
import { countTextTokens } from '../../tokens/count';
import { errors } from '../../errors';

/** Little-endian float32 bytes in base64: what OpenAI sends for encoding_format base64. */
export function toBase64(v: readonly number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i], i * 4);
  return buf.toString('base64');
}

/** A vector cut to `dims` and scaled back to unit length (for upstreams that ignore the request's dimensions). */
export function shorten(v: number[], dims: number | undefined): number[] {
  if (dims === undefined || v.length <= dims) return v;
  const cut = v.slice(0, dims);
  const norm = Math.hypot(...cut) || 1;
  return cut.map((x) => x / norm);
}

/** The gateway's own token count of the inputs (strings by its counter, token arrays by length). */
export function countInputTokens(req: EmbeddingsRequest): number {
  let n = 0;
  for (const x of req.input) n += typeof x === 'string' ? countTextTokens(x) : x.length;
  return n;
}

/** The most tokens the inputs can be: a token is at least one UTF-8 byte; a token array is its length. */
export function inputTokenBound(req: EmbeddingsRequest): number {
  let n = 0;
  for (const x of req.input) n += typeof x === 'string' ? Buffer.byteLength(x, 'utf8') : x.length;
  return n;
}

/** The OpenAI answer from a provider's vectors: one per input, in order, encoded as the client asked. */
export function toEmbeddingsResponse(
  result: EmbeddingsResult,
  req: EmbeddingsRequest,
  model: string,
  provider: string,
): EmbeddingsResponse {
  if (result.vectors.length !== req.input.length || result.vectors.some((v) => !Array.isArray(v))) {
    throw errors.upstreamProtocol(provider, `${result.vectors.length} embeddings for ${req.input.length} inputs`);
  }
  const tokens = result.promptTokens ?? countInputTokens(req);
  return {
    object: 'list',
    data: result.vectors.map((v, index) => {
      const vec = shorten(v, req.dimensions);
      return { object: 'embedding', index, embedding: req.encoding_format === 'base64' ? toBase64(vec) : vec };
    }),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
