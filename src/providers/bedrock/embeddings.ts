import { cohereInputType, cohereVectors } from '../cohere/embeddings';
import type { HttpEmbeddings, UpstreamAnswer } from '../embeddings';
import { textInputs, vectorsOf } from '../embeddings-input';
import { isRecord } from '../shared';
import type { UpstreamTarget } from '../types';
import { signedPost } from './request';

const isTitan = (model: string) => /(^|\.)amazon\.titan-embed/.test(model);

function invoke(target: UpstreamTarget, body: Record<string, unknown>) {
  return signedPost(target, 'invoke', body, 'application/json');
}

function tokenHeader(a: UpstreamAnswer): number | undefined {
  const v = a.headers['x-amzn-bedrock-input-token-count'];
  const n = Number(Array.isArray(v) ? v[0] : v);
  return Number.isFinite(n) && v !== undefined ? n : undefined;
}

/**
 * Bedrock InvokeModel: Titan text embeddings take one input per call ({inputText,
 * dimensions?, normalize} -> {embedding, inputTextTokenCount}); Cohere embed models take
 * the batch ({texts, input_type, embedding_types} -> {embeddings:{float}}), their token
 * count in the X-Amzn-Bedrock-Input-Token-Count header.
 */
export const bedrockEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests(req, target) {
    const texts = textInputs(req, target.provider.name);
    const dims = req.dimensions === undefined ? {} : { dimensions: req.dimensions };
    const normalize = req.dimensions === undefined ? {} : { normalize: true };
    if (isTitan(target.deployment.model))
      return texts.map((inputText) => invoke(target, { inputText, ...dims, ...normalize }));
    const out = req.dimensions === undefined ? {} : { output_dimension: req.dimensions };
    return [invoke(target, { texts, input_type: cohereInputType(target), embedding_types: ['float'], ...out })];
  },
  parseAnswers(answers, _req, provider) {
    let tokens: number | undefined = 0;
    const vectors: number[][] = [];
    for (const a of answers) {
      const b = a.body;
      if (isRecord(b) && b.embedding !== undefined) {
        vectors.push(...vectorsOf([b.embedding], provider));
        tokens =
          typeof b.inputTextTokenCount === 'number' && tokens !== undefined
            ? tokens + b.inputTextTokenCount
            : undefined;
      } else {
        vectors.push(...cohereVectors(b, provider));
        const n = tokenHeader(a);
        tokens = n !== undefined && tokens !== undefined ? tokens + n : undefined;
      }
    }
    return { vectors, ...(tokens === undefined ? {} : { promptTokens: tokens }) };
  },
};
