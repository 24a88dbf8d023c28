import { errors } from '../../src/errors';
import type { Attempt } from '../../src/pipeline/state';
import { getAdapter } from '../../src/providers/registry';
import { getEmbeddingsMapping, type UpstreamAnswer } from '../../src/providers/embeddings';
import type { Transport } from '../../src/transport/http';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../src/types/embeddings';
import { toEmbeddingsResponse } from '../../src/api/embeddings/encode';
import { mapReadError, readBody, target, upstreamFailure, type CallOptions } from './upstream';

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
      ...(await Promise.all(
        requests.slice(i, i + PARALLEL).map(async (r) => {
          const res = await transport.send(r, a.provider, {
            signal: opts.signal,
            headersTimeoutMs: opts.headersTimeoutMs,
            bodyTimeoutMs: opts.idleTimeoutMs,
          });
          // Errors are read short and redacted like chat's; answers are read up to the response size limit.
          if (res.status >= 400) throw await upstreamFailure(adapter, a, res, opts);
          let body: unknown;
          try {
            body = await readBody(res, opts.limits.maxResponseBytes);
          } catch (e) {
            throw mapReadError(e, a.provider.name, opts.signal);
          }
          if (typeof body === 'string') throw errors.upstreamProtocol(a.provider.name, 'the answer was not JSON');
          return { body, headers: res.headers };
        }),
      )),
    );
  }
  return toEmbeddingsResponse(mapping.parseAnswers(answers, req, a.provider.name), req, a.model.id, a.provider.name);
}
