/**
 * @module
 * A stream's hold rule from its output checks: how many words a phrase a check looks for may span (injection
 * phrasings up to eight; a word list's longest entry), so a phrase split across chunks is still seen whole.
 */
import type { HoldRule } from './hold';
import type { GuardRun } from './run';
import type { GuardrailsConfig } from './schema';

const INJECTION_WORDS = 8;

export function holdRules(config: GuardrailsConfig): (run: GuardRun) => HoldRule {
  const words = new Map<string, number>([['prompt_injection', INJECTION_WORDS - 1]]);
  for (const rule of config.custom)
    words.set(rule.id, rule.words ? Math.max(...rule.words.map((w) => w.trim().split(/\s+/).length)) - 1 : 2);
  return (run) => {
    let most = 0;
    for (const c of run.policy.output) most = Math.max(most, words.get(c.rule) ?? 0);
    return { matches: run.policy.output.length > 0, words: most, max: config.max_hold_chars };
  };
}
