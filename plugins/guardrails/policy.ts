/**
 * @module
 * Which checks a request gets: the default policy, its model's, its key's and its account's (set through the admin
 * API), merged. A policy adds to the others and never removes from them: per detector and side the strictest action
 * wins (block over redact over flag), and the classifier fails closed when any of them says so. Merged sets are made
 * once per combination of names and kept.
 */
import type { ConfigProblem, Detector, DetectorRegistry, GatewayState } from '../../src/plugin';
import { strictestFirst } from './run';
import type { Assignments } from './store/assignments';
import type { Action, GuardrailsConfig } from './schema';

export const CLASSIFIER = 'classifier';

export interface Check {
  rule: string;
  action: Action;
  detector: Detector;
}

/** What one request runs: checks per side, the classifier (input), and whether it fails closed. */
export interface RequestPolicy {
  input: Check[];
  output: Check[];
  classifier: { action: Action; failClosed: boolean } | null;
}

const STRENGTH: Record<Action, number> = { flag: 0, redact: 1, block: 2 };

/** The classifier check of several policies: the strictest action; fails closed when any policy says so. */
function mergeClassifier(had: RequestPolicy['classifier'], action: Action, failClosed: boolean) {
  if (!had) return { action, failClosed };
  return {
    action: STRENGTH[had.action] > STRENGTH[action] ? had.action : action,
    failClosed: had.failClosed || failClosed,
  };
}

export class Policies {
  private readonly merged = new Map<string, RequestPolicy | null>();

  constructor(
    private readonly config: GuardrailsConfig,
    private readonly registry: DetectorRegistry,
    private readonly assignments: Assignments,
  ) {}

  /** The request's merged policy, or null when none applies (the request passes untouched). */
  resolve(s: GatewayState): RequestPolicy | null {
    const names: string[] = [];
    if (this.config.default_policy) names.push(this.config.default_policy);
    const byModel = this.config.models[s.model.id];
    if (byModel) names.push(byModel);
    if (s.principal) {
      const byAccount = this.assignments.get('account', s.principal.accountId);
      if (byAccount) names.push(byAccount);
      const byKey = this.assignments.get('key', s.principal.keyHash);
      if (byKey) names.push(byKey);
    }
    if (names.length === 0) return null;
    const key = names.join('\0');
    let p = this.merged.get(key);
    if (p === undefined) {
      p = this.merge(names);
      this.merged.set(key, p);
    }
    return p;
  }

  private merge(names: string[]): RequestPolicy | null {
    const sides = { input: new Map<string, Check>(), output: new Map<string, Check>() };
    let classifier: RequestPolicy['classifier'] = null;
    for (const name of new Set(names)) {
      const policy = this.config.policies[name];
      if (!policy) continue; // an assignment naming a policy since removed from YAML: nothing to add
      for (const c of policy.checks) {
        if (c.detector === CLASSIFIER) {
          classifier = mergeClassifier(classifier, c.action, policy.on_error === 'fail_closed');
          continue;
        }
        const detector = this.detector(c.detector);
        for (const side of c.on === 'both' ? (['input', 'output'] as const) : [c.on]) {
          const had = sides[side].get(c.detector);
          if (!had || STRENGTH[c.action] > STRENGTH[had.action])
            sides[side].set(c.detector, { rule: c.detector, action: c.action, detector });
        }
      }
    }
    const input = strictestFirst([...sides.input.values()]);
    const output = strictestFirst([...sides.output.values()]);
    return input.length + output.length === 0 && !classifier ? null : { input, output, classifier };
  }

  /**
   * Checks naming a detector no plugin registered. Asked once every plugin is set up (a detector may come from a
   * plugin later in the chain), so that start and check refuse the config instead of the first request failing.
   */
  problems(): ConfigProblem[] {
    const known = this.registry.ids();
    return Object.entries(this.config.policies).flatMap(([name, policy]) =>
      policy.checks.flatMap((c, i) =>
        c.detector === CLASSIFIER || this.registry.get(c.detector)
          ? []
          : [
              {
                pointer: `/policies/${name}/checks/${i}/detector`,
                message: `unknown detector '${c.detector}'; known: ${[CLASSIFIER, ...known].sort().join(', ')}`,
              },
            ],
      ),
    );
  }

  private detector(id: string): Detector {
    const d = this.registry.get(id);
    if (!d) throw new Error(`guardrails: a policy names the detector '${id}', which no plugin registered`);
    return d;
  }
}
