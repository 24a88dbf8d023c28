/**
 * @module
 * What the call log keeps of a call's arguments and result (with `record_payloads` only): their JSON, passed through
 * every detector of the guardrails registry when that plugin is in the chain (e-mail addresses, card numbers,
 * secrets, ... become `[EMAIL]`, `[CARD]`, `[SECRET]`), so the log holds no more than the guardrails would let by.
 */
import { GUARDRAIL_DETECTORS, type DetectorMatch, type SharedServices } from '../../src/plugin';

export function payloadWriter(shared: SharedServices, record: boolean): (v: unknown) => string | null {
  return (v) => {
    if (!record || v === undefined || v === null) return null;
    const json = JSON.stringify(v);
    const registry = shared.get(GUARDRAIL_DETECTORS);
    if (!registry) return json;
    let text = json;
    for (const id of registry.ids()) {
      const d = registry.get(id);
      if (!d) continue;
      const lower = text.toLowerCase();
      if (d.keywords && !d.keywords.some((k) => lower.includes(k))) continue;
      text = replaced(text, d.find(text), `[${d.label}]`);
    }
    return text;
  };
}

/** `text` with each match (the last first, overlaps skipped) replaced by `label`. */
function replaced(text: string, matches: DetectorMatch[], label: string): string {
  let out = text;
  let before = Infinity;
  for (const m of [...matches].sort((a, b) => b.start - a.start)) {
    if (m.end > before) continue;
    out = out.slice(0, m.start) + label + out.slice(m.end);
    before = m.start;
  }
  return out;
}
