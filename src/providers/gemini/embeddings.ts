import { errors } from '../../errors';
import type { EmbeddingsRequest } from '../../types/embeddings';
import type { HttpEmbeddings } from '../embeddings';
import { numberList, textInputs } from '../embeddings-input';
import { joinUrl, upstreamHeaders } from '../shared/http';
import { isRecord } from '../shared';
import type { UpstreamTarget } from '../types';

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
  buildRequests(req: EmbeddingsRequest, target: UpstreamTarget) {
    const texts = textInputs(req, target.provider.name);
    const model = target.deployment.model.replace(/^models\//, '');
    const dims = req.dimensions === undefined ? {} : { outputDimensionality: req.dimensions };
    const base = target.provider.api_base ?? 'https://generativelanguage.googleapis.com';
    const single = texts.length === 1;
    const body = single
      ? { content: content(texts[0]), ...dims }
      : { requests: texts.map((t) => ({ model: `models/${model}`, content: content(t), ...dims })) };
    return [
      {
        url: joinUrl(
          base,
          `/v1beta/models/${encodeURIComponent(model)}:${single ? 'embedContent' : 'batchEmbedContents'}`,
        ),
        method: 'POST',
        headers: upstreamHeaders(target, { 'x-goog-api-key': target.provider.api_key ?? '' }),
        body: JSON.stringify(body),
      },
    ];
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
      vectors: list.map((e: unknown) => {
        const v = isRecord(e) ? numberList(e.values) : null;
        if (!v) throw errors.upstreamProtocol(provider, 'an embedding had no values');
        return v;
      }),
    };
  },
};
