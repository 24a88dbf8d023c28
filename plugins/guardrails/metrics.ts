/**
 * @module
 * The guardrails plugin's metrics: its actions per rule, side and action (never a matched value; rules are the
 * policies' detector ids, a bounded set), and the classifier's calls by outcome.
 */
import { Counter, type Registry } from '../../src/plugin';

/** Registered once at setup. */
export function guardrailsMetrics(registry: Registry) {
  return {
    actions: new Counter({
      name: 'gateway_guardrails_actions_total',
      help: 'Guardrail actions (matches blocked, redacted or flagged) by rule, side and action',
      labelNames: ['rule', 'side', 'action'] as const,
      registers: [registry],
    }),
    classifier: new Counter({
      name: 'gateway_guardrails_classifier_calls_total',
      help: 'Guardrail classifier calls by outcome (safe, unsafe, error)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
  };
}

export type GuardrailsMetrics = ReturnType<typeof guardrailsMetrics>;
