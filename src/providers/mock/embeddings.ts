import { createHash } from 'node:crypto';
import type { EmbeddingsRequest } from '../../types/embeddings';
import { countTextTokens } from '../../tokens/count';
import type { LocalEmbeddings } from '../embeddings';
import { targetOptions } from '../shared/http';
import type { UpstreamTarget } from '../types';
import { checkEmbeddings } from './bounds';

const DEFAULT_DIMENSIONS = 16;

/** A unit vector of `dims` numbers derived from the input alone (SHA-256 in counter mode). */
export function mockVector(input: string | number[], dims: number): number[] {
  const seed = typeof input === 'string' ? `s:${input}` : `t:${input.join(',')}`;
  const v: number[] = [];
  for (let block = 0; v.length < dims; block++) {
    const h = createHash('sha256').update(`${block}:${seed}`).digest();
    for (let i = 0; i + 2 <= h.length && v.length < dims; i += 2) v.push(h.readUInt16LE(i) / 32767.5 - 1);
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/**
 * The built-in mock: deterministic vectors, `dimensions` honoured, tokens by the gateway's counter. Inputs,
 * dimensions and their product are bounded (MOCK_LIMITS, ./bounds.ts): beyond, a 400 naming the field, before any work.
 */
export const mockEmbeddings: LocalEmbeddings = {
  kind: 'local',
  embed(req: EmbeddingsRequest, target: UpstreamTarget) {
    const o = targetOptions(target);
    const native =
      Number.isInteger(o.dimensions) && (o.dimensions as number) > 0 ? (o.dimensions as number) : DEFAULT_DIMENSIONS;
    const dims = req.dimensions ?? native;
    checkEmbeddings(req.input.length, dims, req.dimensions !== undefined);
    let tokens = 0;
    for (const x of req.input) tokens += typeof x === 'string' ? countTextTokens(x) : x.length;
    return { vectors: req.input.map((x) => mockVector(x, dims)), promptTokens: tokens };
  },
};
