import { errors } from '../../errors';
import type { HttpEmbeddings } from '../embeddings';
import { textInputs, vectorsOf } from '../embeddings-input';
import { isRecord } from '../shared';
import { postJson } from '../shared/http';
import { GEMINI_BASE } from './request';

function content(text: string): Record<string, unknown> {
  return { parts: [{ text }] };
}

/**
 * Gemini: one input -> models/{m}:embedContent {content, outputDimensionality?} answering
 * {embedding:{values}}; several -> models/{m}:batchEmbedContents {requests:[...]} answering
 * {embeddings:[{values}]}. Without usageMetadata.promptTokenCount the gateway counts the tokens.
 */
export const geminiEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests(req, target) {
    const texts = textInputs(req, target.provider.name);
    const model = target.deployment.model.replace(/^models\//, '');
    const dims = req.dimensions === undefined ? {} : { outputDimensionality: req.dimensions };
    const single = texts.length === 1;
    const body = single
      ? { content: content(texts[0]), ...dims }
      : { requests: texts.map((t) => ({ model: `models/${model}`, content: content(t), ...dims })) };
    const path = `/v1beta/models/${encodeURIComponent(model)}:${single ? 'embedContent' : 'batchEmbedContents'}`;
    return [postJson(target, GEMINI_BASE, path, { 'x-goog-api-key': target.provider.api_key ?? '' }, body)];
  },
  parseAnswers(answers, _req, provider) {
    const body = answers[0]?.body;
    const list =
      isRecord(body) && Array.isArray(body.embeddings)
        ? body.embeddings
        : isRecord(body) && body.embedding !== undefined
          ? [body.embedding]
          : null;
    if (!list) throw errors.upstreamProtocol(provider, 'no embeddings in the answer');
    const meta = isRecord(body) && isRecord(body.usageMetadata) ? body.usageMetadata.promptTokenCount : undefined;
    return {
      ...(typeof meta === 'number' ? { promptTokens: meta } : {}),
      vectors: vectorsOf(list, provider, (e) => (isRecord(e) ? e.values : null), 'an embedding had no values'),
    };
  },
};
