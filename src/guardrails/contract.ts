/**
 * @module
 * What guardrails share with the rest of the gateway, through the public plugin API: the detector contract (so an
 * outside plugin can add a detector without importing the guardrails plugin), the registry slot they meet in, and
 * the record of what a guard did to a request (the generation record keeps it). No detector lives here.
 */
import type { SharedServices } from '../pipeline/shared-services';

/** Where a detector found something: [start, end) in UTF-16 code units of the text it was given. */
export interface DetectorMatch {
  start: number;
  end: number;
}

/**
 * A detector: a pure, synchronous function over one text. `keywords` (lower case) is a prefilter: when none occurs in
 * the lower-cased text, `find` is not called (gitleaks' convention; most texts hold none, and the regex never runs).
 * `label` names the placeholder (`[EMAIL_1]`): upper-case letters, digits and `_`.
 */
export interface Detector {
  id: string;
  label: string;
  keywords?: readonly string[];
  find(text: string): DetectorMatch[];
}

/** The detectors a guardrails plugin may name in its policies, besides its own; filled by any plugin at setup. */
export interface DetectorRegistry {
  register(detector: Detector): void;
  get(id: string): Detector | undefined;
  ids(): string[];
}

/** The `services.shared` slot of the registry. */
export const GUARDRAIL_DETECTORS = 'guardrails.detectors';

/**
 * The registry, made by whichever plugin asks first (the guardrails plugin or one that adds a detector), so the chain's
 * order does not matter: detectors are looked up when a policy is first used, after every plugin's setup.
 */
export function detectorRegistry(shared: SharedServices): DetectorRegistry {
  const found = shared.get(GUARDRAIL_DETECTORS);
  if (found) return found;
  const byId = new Map<string, Detector>();
  const made: DetectorRegistry = {
    register(d) {
      if (byId.has(d.id)) throw new Error(`guardrails: a detector '${d.id}' is registered twice`);
      byId.set(d.id, d);
    },
    get: (id) => byId.get(id),
    ids: () => [...byId.keys()],
  };
  shared.set(GUARDRAIL_DETECTORS, made);
  return made;
}

/**
 * One thing a guard did: which rule (a detector id or a check's name), on which side, with what action. Never the
 * value.
 */
export interface GuardrailEvent {
  rule: string;
  side: 'input' | 'output';
  action: 'block' | 'redact' | 'flag';
  /** How many matches (a redaction of three e-mail addresses is one event with count 3). */
  count: number;
}
