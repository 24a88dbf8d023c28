/**
 * @module
 * The params plugin: validates every field of the chat request against the spec with one compiled schema (400 listing
 * every problem, nothing sent upstream), maps deprecated functions to tools and back, and drops or refuses parameters
 * the model's providers do not accept. Put it before `credit`, so that a bad request reserves nothing. See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth
 *   - params:
 *       unsupported: drop     # or reject (400 unsupported_parameter); per model: models[].unsupported_params
 *   - credit
 *   - routing
 * ```
 */
import { definePlugin, PARAMS_VALIDATE } from '../../src/plugin';
import { validateChatRequest } from './validate';
import { forwardsUnknown, knownParams, modelParams, valueChecks } from './supported';
import { paramsMiddleware } from './middleware';
import { configSchema, type ParamsConfig } from './schema';

export default definePlugin<ParamsConfig>({
  name: 'params',
  description: 'Request validation and per-model parameter support.',
  configSchema,
  setup(config, services) {
    // The same check for a request built elsewhere (the fallback plugin's entries with parameter overrides).
    services.shared.set(PARAMS_VALIDATE, validateChatRequest);
    const typeOf = (name: string) => services.models.provider(name).type;
    const supported = new Map(
      services.models
        .all()
        .map((m) => [
          m.id,
          { accepted: modelParams(m, typeOf), forwards: forwardsUnknown(m, typeOf), checks: valueChecks(m, typeOf) },
        ]),
    );
    return { middleware: paramsMiddleware({ config, known: knownParams(), supported }) };
  },
});
