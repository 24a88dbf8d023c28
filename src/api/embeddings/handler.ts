import { errors } from '../../errors';
import type { EmbeddingsRequest } from '../../types/embeddings';
import type { ChatRequest } from '../../types/openai';
import { splitChatRequest } from '../chat-request';
import { timeoutLimits, type OperationDeps, type OperationSpec, type ParsedRequest } from '../run-operation';
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

interface ParsedEmbeddings extends ParsedRequest {
  input: EmbeddingsRequest['input'];
  fields: Omit<ChatRequest, 'messages'> & Record<string, unknown>;
  user?: string;
}

/**
 * POST /v1/embeddings: the core's own checks (a model that serves embeddings, an input), then the same chain as chat
 * with operation 'embeddings': params validates the rest, credit reserves from the input bound, routing calls the
 * provider's embeddings mapping.
 */
export function embeddingsOperation(deps: OperationDeps): OperationSpec<ParsedEmbeddings> {
  const limits = timeoutLimits(deps);
  return {
    name: 'embeddings',
    endpoint: 'embeddings',
    requiresInput: true,
    parse(_ctx, body) {
      if (body.stream !== undefined)
        throw errors.invalidRequest('embeddings cannot be streamed', 'stream', 'invalid_value');
      const { request, options } = splitChatRequest({ ...body, messages: [] }, limits);
      const { messages: _m, input, ...fields } = request;
      const user = typeof body.user === 'string' ? body.user : undefined;
      // The chain sees a chat request with no messages: model and user only.
      const chat: ChatRequest = { model: request.model, messages: [], ...(user !== undefined ? { user } : {}) };
      return { request: chat, options, input: inputList(input), fields, user };
    },
    state(model, p) {
      const { encoding_format, ...rest } = p.fields;
      const embeddings = {
        ...rest,
        model: model.id,
        input: p.input,
        encoding_format: encoding_format ?? 'float',
      } as EmbeddingsRequest;
      return { embeddings, request: { ...p.request, model: model.id } };
    },
    prepare(s) {
      if (s.embeddings) s.promptTokens = countInputTokens(s.embeddings);
    },
    answer(ctx, s) {
      if (s.result?.kind !== 'embeddings') throw errors.internal();
      ctx.set(s.responseHeaders);
      ctx.body = s.result.body;
    },
  };
}
