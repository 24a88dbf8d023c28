/**
 * @module
 * The guardrails plugin: PII and secrets found by small detectors (detectors/: e-mail, phone, cards with Luhn, IBANs
 * with mod-97, IP addresses, opt-in national ids, gitleaks' secret rules, injection heuristics, the operator's regexes
 * and word lists, and any detector another plugin registers), checked on a request's input, its answer or both by
 * named policies per model, key and account (policy.ts, routes.ts); each match blocked, redacted into a placeholder
 * the answer gets back restored (run.ts, stream-guard.ts), or flagged; an optional classifier model (classifier.ts).
 * Every action is in the generation record and the metrics, never a matched value. See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth
 *   - credit
 *   - guardrails:
 *       policies:
 *         pii:
 *           checks:
 *             - { detector: email, on: both, action: redact }
 *             - { detector: payment_card, on: both, action: redact }
 *             - { detector: secrets, on: input, action: block }
 *             - { detector: prompt_injection, on: input, action: flag }
 *       default_policy: pii
 *       models: { "mock/gpt-4o-mini": pii }
 *   - storage
 *   - routing
 * ```
 */
import { ADMIN_GUARD, definePlugin, detectorRegistry } from '../../src/plugin';
import { Classifier } from './classifier';
import { builtinDetectors } from './detectors/builtin';
import { holdRules } from './hold-rules';
import { guardrailsMetrics } from './metrics';
import { guardrailsMiddleware } from './middleware';
import { Policies } from './policy';
import { registerPolicyRoutes } from './routes';
import { configSchema, type GuardrailsConfig } from './schema';
import { Assignments } from './store/assignments';
import { guardrailsMigrations } from './store/migrations';

export default definePlugin<GuardrailsConfig>({
  name: 'guardrails',
  description: 'PII and secrets redaction with restored answers, injection and content checks, per policy.',
  store: { migrations: guardrailsMigrations },
  configSchema,
  async setup(config, services) {
    const registry = detectorRegistry(services.shared);
    for (const d of builtinDetectors(config.national_ids, config.custom)) registry.register(d);
    const assignments = new Assignments(services.store.db, services.logger);
    const admin = services.shared.get(ADMIN_GUARD);
    const names = new Set(Object.keys(config.policies));
    if (admin) registerPolicyRoutes(services.router, services.store, admin, assignments, names);
    // No policy at all: no step on the chain, nothing a request pays.
    if (names.size === 0) return {};
    await assignments.load();
    assignments.start(config.refresh_ms);
    const policies = new Policies(config, registry, assignments);
    return {
      middleware: guardrailsMiddleware({
        policies,
        metrics: guardrailsMetrics(services.metrics),
        classifier: config.classifier ? new Classifier(config.classifier) : null,
        storeOriginals: config.store_originals,
        holdRule: holdRules(config),
      }),
      close: () => assignments.stop(),
      configProblems: () => policies.problems(),
    };
  },
});
