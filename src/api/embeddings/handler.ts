import { errors } from '../../errors';
import type { GatewayContext } from '../../pipeline/plugin';
import type { EmbeddingsRequest } from '../../types/embeddings';
import { chainBodyLimits, timeoutLimits, type ChatDeps } from '../chat';
import { splitChatRequest } from '../chat-request';
import { servesEndpoint } from '../endpoints';
import { createState, readInputBody } from '../gateway-state';
import { countInputTokens } from './encode';

/** `input` as a list: a string or one token array becomes a list of one. */
function inputList(input: unknown): EmbeddingsRequest['input'] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'number')) return [input as number[]];
  if (Array.isArray(input)) return input as EmbeddingsRequest['input'];
  throw errors.invalidRequest(
    'input must be a string, an array of strings or an array of token arrays',
    'input',
    'invalid_type',
  );
}

/**
 * POST /v1/embeddings: the core's own checks (a model that serves embeddings, an input),
 * then the same chain as chat with operation 'embeddings': params validates the rest,
 * credit reserves from the input bound, routing calls the provider's embeddings mapping.
 */
export function embeddingsHandler(deps: ChatDeps): (ctx: GatewayContext) => Promise<void> {
  const bodyLimits = chainBodyLimits(deps);
  const limits = timeoutLimits(deps);
  return async (ctx) => {
    const startedAt = process.hrtime.bigint();
    const body = await readInputBody(ctx, bodyLimits);
    if (body.stream !== undefined)
      throw errors.invalidRequest('embeddings cannot be streamed', 'stream', 'invalid_value');
    const { request: fields, options } = splitChatRequest({ ...body, messages: [] }, limits);
    const model = deps.models.get(fields.model);
    if (!model) throw errors.modelNotFound(fields.model);
    if (!servesEndpoint(model, 'embeddings')) throw errors.wrongEndpoint(model.id, 'embeddings');
    const { messages: _m, input, encoding_format, ...rest } = fields;
    const embeddings = {
      ...rest,
      model: model.id,
      input: inputList(input),
      encoding_format: encoding_format ?? 'float',
    } as EmbeddingsRequest;
    ctx.state.gateway = createState(
      ctx,
      {
        startedAt,
        operation: 'embeddings',
        model,
        options,
        embeddings,
        request: { model: model.id, messages: [], ...(typeof body.user === 'string' ? { user: body.user } : {}) },
      },
      deps.lifecycle,
    );
    ctx.state.gateway.promptTokens = countInputTokens(embeddings);
    await deps.chain(ctx);
    const s = ctx.state.gateway;
    if (s.result?.kind !== 'embeddings') throw errors.internal();
    ctx.set(s.responseHeaders);
    ctx.body = s.result.body;
  };
}
