import {
  errors,
  getAdapter,
  getEmbeddingsMapping,
  toEmbeddingsResponse,
  type Attempt,
  type EmbeddingsRequest,
  type EmbeddingsResponse,
  type Transport,
  type UpstreamAnswer,
} from '../../src/plugin';
import { sendForJson, target, type CallOptions } from './upstream';

/** Upstream calls of one attempt run at most this many at a time (Titan takes one input per call). */
const PARALLEL = 8;

/** One embeddings attempt: the provider's mapping, its upstream call(s), the OpenAI answer. */
export async function callEmbeddings(
  a: Attempt,
  transport: Transport,
  req: EmbeddingsRequest,
  opts: CallOptions,
): Promise<EmbeddingsResponse> {
  const mapping = getEmbeddingsMapping(a.provider.type);
  if (!mapping)
    throw errors.invalidRequest(
      `Provider '${a.provider.name}' (${a.provider.type}) has no embeddings endpoint`,
      'model',
      'embeddings_unsupported',
    );
  const t = target(a, opts);
  if (mapping.kind === 'local') return toEmbeddingsResponse(mapping.embed(req, t), req, a.model.id, a.provider.name);
  const adapter = getAdapter(a.provider.type);
  if (adapter.kind === 'local') throw errors.internal();
  const requests = mapping.buildRequests(req, t);
  const answers: UpstreamAnswer[] = [];
  for (let i = 0; i < requests.length; i += PARALLEL) {
    answers.push(
      ...(await Promise.all(requests.slice(i, i + PARALLEL).map((r) => sendForJson(adapter, a, r, transport, opts)))),
    );
  }
  return toEmbeddingsResponse(mapping.parseAnswers(answers, req, a.provider.name), req, a.model.id, a.provider.name);
}
