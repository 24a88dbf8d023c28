/**
 * @module
 * The params plugin's step on the chat chain: validate the request, map deprecated functions to tools (and the answer
 * back), drop or refuse what the model does not accept.
 */
import {
  billedFeatureProblem,
  combine,
  errors,
  promptTokens,
  promptTokensAtMost,
  type ChatRequest,
  type GatewayContext,
  type Next,
} from '../../src/plugin';
import { validateChatRequest } from './validate';
import { unsupportedFields } from './supported';
import { checkEmbeddings } from './embeddings';
import { chunkToFunctionCall, functionsToTools, toolCallsToFunctionCall } from './legacy-functions';
import type { ParamsConfig } from './schema';

/** What one model accepts, worked out once at setup (supported.ts). */
export interface ModelSupport {
  accepted: Set<string>;
  forwards: boolean;
  checks: Array<(req: ChatRequest) => string[]>;
}

export interface ParamsDeps {
  config: Readonly<ParamsConfig>;
  /** Every parameter some provider knows (knownParams()). */
  known: Set<string>;
  /** By model id. */
  supported: Map<string, ModelSupport>;
}

export function paramsMiddleware({ config, known, supported }: ParamsDeps) {
  return async function params(ctx: GatewayContext, next: Next): Promise<void> {
    const s = ctx.state.gateway;
    if (s.embeddings) return checkEmbeddings(s.embeddings, next);
    const r = s.request;
    // The room max_tokens has beside the prompt: tokenized only when the cheap bound cannot show it fits.
    const room = () => {
      const atLeast = s.model.context_length - promptTokensAtMost(r);
      const fits = typeof r.max_tokens === 'number' && r.max_tokens <= atLeast;
      return fits ? atLeast : s.model.context_length - promptTokens(s);
    };
    const problems = validateChatRequest(r, s.options, room);
    if (problems.length > 0) throw combine(problems);

    const legacy = functionsToTools(r);
    const m = supported.get(s.model.id) as ModelSupport;
    const unsupported = unsupportedFields(r, known, m.accepted, m.forwards, m.checks);
    if (unsupported.length > 0) {
      const provider = s.options.provider as { require_parameters?: boolean } | undefined;
      const mode =
        provider?.require_parameters === true ? 'reject' : (s.model.unsupported_params ?? config.unsupported);
      if (mode === 'reject') {
        throw combine(
          unsupported.map((k) =>
            errors.invalidRequest(`${k} is not supported by model '${s.model.id}'`, k, 'unsupported_parameter'),
          ),
        );
      }
      for (const k of unsupported) delete r[k];
      // The endpoint may have named fields it ignored already (/v1/responses, /v1/messages): add to them.
      const before = s.responseHeaders['X-Gateway-Dropped-Params'];
      s.responseHeaders['X-Gateway-Dropped-Params'] = [before, ...unsupported].filter(Boolean).join(', ');
    }
    // A parameter the provider bills apart (web search, priority tier, audio, predictions) needs the model's price.
    const unpriced = billedFeatureProblem(r, s.model);
    if (unpriced) throw unpriced;

    await next();
    if (!legacy) return;
    const result = s.result;
    if (result?.kind === 'completion') toolCallsToFunctionCall(result.body);
    else if (result?.kind === 'stream') result.stream.observe({ name: 'params', onChunk: chunkToFunctionCall });
  };
}
