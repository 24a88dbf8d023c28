import { errors } from '../../errors';
import type { EmbeddingsRequest } from '../../types/embeddings';
import { cohereInputType, cohereVectors } from '../cohere/embeddings';
import type { HttpEmbeddings, UpstreamAnswer } from '../embeddings';
import { numberList, textInputs } from '../embeddings-input';
import { joinUrl } from '../shared/http';
import { isRecord } from '../shared';
import type { UpstreamRequest, UpstreamTarget } from '../types';
import { credentials } from './index';
import { signV4 } from './sigv4';

const isTitan = (model: string) => /(^|\.)amazon\.titan-embed/.test(model);

function invoke(target: UpstreamTarget, body: Record<string, unknown>): UpstreamRequest {
  const region = String({ ...target.provider.options }.region ?? 'us-east-1');
  const base = target.provider.api_base ?? `https://bedrock-runtime.${region}.amazonaws.com`;
  const url = joinUrl(base, `/model/${encodeURIComponent(target.deployment.model)}/invoke`);
  const text = JSON.stringify(body);
  const headers = signV4({
    method: 'POST',
    url,
    body: text,
    region,
    service: 'bedrock',
    credentials: credentials(target),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...target.provider.headers,
      ...target.extraHeaders,
    },
  });
  return { url, method: 'POST', headers, body: text };
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
  buildRequests(req: EmbeddingsRequest, target: UpstreamTarget) {
    const texts = textInputs(req, target.provider.name);
    const dims = req.dimensions === undefined ? {} : { dimensions: req.dimensions };
    if (isTitan(target.deployment.model))
      return texts.map((inputText) =>
        invoke(target, { inputText, ...dims, ...(req.dimensions === undefined ? {} : { normalize: true }) }),
      );
    const out = req.dimensions === undefined ? {} : { output_dimension: req.dimensions };
    return [invoke(target, { texts, input_type: cohereInputType(target), embedding_types: ['float'], ...out })];
  },
  parseAnswers(answers, _req, provider) {
    let tokens: number | undefined = 0;
    const vectors: number[][] = [];
    for (const a of answers) {
      const b = a.body;
      if (isRecord(b) && b.embedding !== undefined) {
        const v = numberList(b.embedding);
        if (!v) throw errors.upstreamProtocol(provider, 'an embedding was not a list of numbers');
        vectors.push(v);
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
