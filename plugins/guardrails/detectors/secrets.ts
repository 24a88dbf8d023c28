/**
 * @module
 * Secrets (cloud keys, tokens, private keys) by the vendored gitleaks rules (gitleaks-rules.ts): a rule runs only when
 * one of its keywords is in the text, its secret is the first capture group (else the match), and a secret below the
 * rule's entropy or on its allowlist is not one (a placeholder such as `AKIA...EXAMPLE`).
 */
import type { Detector, DetectorMatch } from '../../../src/plugin';
import { GITLEAKS_RULES, type SecretRule } from './gitleaks-rules';
import { KeywordIndex } from './keywords';

/** Shannon entropy (bits per character) of a string, as gitleaks computes it. */
export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Each rule's regex again with `d` (match indices), to find where its secret group is. */
const COMPILED = GITLEAKS_RULES.map((r) => ({ ...r, regex: new RegExp(r.regex.source, `${r.regex.flags}d`) }));

function ruleMatches(rule: SecretRule, text: string, out: DetectorMatch[]): void {
  const re = rule.regex;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const span = (m.indices?.[1] ?? m.indices?.[0]) as [number, number];
    const secret = text.slice(span[0], span[1]);
    if (rule.entropy !== undefined && shannonEntropy(secret) < rule.entropy) continue;
    if (rule.allow?.some((a) => a.test(secret))) continue;
    out.push({ start: span[0], end: span[1] });
    // A rule's trailing delimiter is not part of the secret: the next secret may start right after it.
    if (re.lastIndex > span[1]) re.lastIndex = span[1];
  }
}

/** Every rule's keywords in one index: a rule runs when one of its keywords is in the text. */
const INDEX = new KeywordIndex(COMPILED.flatMap((r) => r.keywords));
const RULE_OF = COMPILED.flatMap((r) => r.keywords.map(() => r));

/** Every gitleaks rule whose keyword is in the text; one detector (`secrets`) for all, labelled SECRET. */
export const secrets: Detector = {
  id: 'secrets',
  label: 'SECRET',
  find(text) {
    const out: DetectorMatch[] = [];
    const rules = new Set<SecretRule>();
    for (const k of INDEX.found(text.toLowerCase())) rules.add(RULE_OF[k]);
    for (const rule of rules) ruleMatches(rule, text, out);
    return out;
  },
};
