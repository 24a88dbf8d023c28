import {
  billedFeatureProblem,
  combine,
  definePlugin,
  errors,
  PARAMS_VALIDATE,
  promptTokens,
  promptTokensAtMost,
} from '../../src/plugin';
import { validateChatRequest } from './validate';
import { forwardsUnknown, knownParams, modelParams, unsupportedFields, valueChecks } from './supported';
import { checkEmbeddings } from './embeddings';
import { chunkToFunctionCall, functionsToTools, toolCallsToFunctionCall } from './legacy-functions';

export interface ParamsConfig {
  /**
   * A parameter the model does not accept: drop it (named in X-Gateway-Dropped-Params) or answer 400. Per model:
   * `unsupported_params`.
   */
  unsupported: 'drop' | 'reject';
}

/**
 * Validates every field of the chat request against the spec with one compiled schema
 * (400 listing every problem, nothing sent upstream), maps deprecated functions to tools
 * and back, and drops or refuses parameters the model's providers do not accept.
 */
export default definePlugin<ParamsConfig>({
  name: 'params',
  description: 'Request validation and per-model parameter support.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { unsupported: { enum: ['drop', 'reject'], default: 'drop' } },
  },
  setup(config, services) {
    // The same check for a request built elsewhere (the fallback plugin's entries with parameter overrides).
    services.shared.set(PARAMS_VALIDATE, validateChatRequest);
    const known = knownParams();
    const typeOf = (name: string) => services.models.provider(name).type;
    const supported = new Map(
      services.models
        .all()
        .map((m) => [
          m.id,
          { accepted: modelParams(m, typeOf), forwards: forwardsUnknown(m, typeOf), checks: valueChecks(m, typeOf) },
        ]),
    );
    return {
      async middleware(ctx, next) {
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
        const m = supported.get(s.model.id) as {
          accepted: Set<string>;
          forwards: boolean;
          checks: Array<(req: typeof r) => string[]>;
        };
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
          s.responseHeaders['X-Gateway-Dropped-Params'] = unsupported.join(', ');
        }
        // A parameter the provider bills apart (web search, priority tier, audio, predictions) needs the model's price.
        const unpriced = billedFeatureProblem(r, s.model);
        if (unpriced) throw unpriced;

        await next();
        if (!legacy) return;
        const result = s.result;
        if (result?.kind === 'completion') toolCallsToFunctionCall(result.body);
        else if (result?.kind === 'stream') result.stream.observe({ name: 'params', onChunk: chunkToFunctionCall });
      },
    };
  },
});
