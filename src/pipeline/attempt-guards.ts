import { errors, type GatewayError } from '../errors';
import { billedFeatureProblem } from '../models/billed-features';
import { servesEndpoint } from '../models/endpoints';
import type { Attempt, GatewayState } from './state';

/**
 * The attempt rule: every upstream attempt of a request (the first, each retry, each fallback model, the
 * context-window fallback, on every endpoint) passes every registered guard before routing makes it. Checks written
 * once per request see only the model the client named; a guard sees each attempt's own model and request.
 */

/** What an attempt used, told to the guards that let it through when it ends. */
export interface AttemptUse {
  /** The attempt answered (a plain answer, or a stream that was opened). */
  ok: boolean;
  /** Tokens it used by the upstream's usage; 0 when it failed before any; undefined when the answer said nothing. */
  tokens: number | undefined;
}

/**
 * A guard's answer for one attempt: a refusal (the attempt is skipped, its reason recorded), or nothing / an `end`
 * that is called exactly once when the attempt ends (a failed attempt at once, an answer when its stream ends).
 */
export type AttemptVerdict = { refuse: GatewayError } | { end: (use: AttemptUse) => void } | undefined | void;

export interface AttemptGuard {
  /** Used in logs and in the skipped attempt's record. */
  name: string;
  check(s: GatewayState, attempt: Attempt): AttemptVerdict | Promise<AttemptVerdict>;
}

/** What the guards said of one attempt: refused (by which guard), or admitted with what to call at its end. */
export type AttemptTicket =
  { ok: false; guard: string; error: GatewayError } | { ok: true; end?: (use: AttemptUse) => void };

const ADMITTED: AttemptTicket = { ok: true };

/**
 * The built-in guard: a model is only called for an operation it serves (chat/responses or embeddings), and never
 * with a parameter its provider bills that the model's config gives no price for (web search, priority, audio, ...).
 */
function coreRefusal(s: GatewayState, a: Attempt): GatewayError | undefined {
  const endpoint = s.operation === 'embeddings' ? 'embeddings' : 'chat';
  if (!servesEndpoint(a.model, endpoint)) return errors.wrongEndpoint(a.model.id, endpoint);
  return endpoint === 'chat' ? billedFeatureProblem(a.request, a.model) : undefined;
}

/** Guards registered by plugins at setup (the `attemptGuards` extension point), run in registration order. */
export class AttemptGuards {
  private readonly guards: AttemptGuard[] = [];

  register(guard: AttemptGuard): void {
    if (typeof guard?.check !== 'function' || typeof guard.name !== 'string')
      throw new TypeError('an attempt guard needs a name and a check(state, attempt) function');
    this.guards.push(guard);
  }

  /** The guards' names, in the order they run (the built-in check, `gateway`, first). */
  names(): string[] {
    return ['gateway', ...this.guards.map((g) => g.name)];
  }

  /**
   * Ask every guard about an attempt. A refusal ends the ones that had admitted it (nothing was used); the first
   * refusal is the answer. Not an async function: with no guard that waits, no promise is made.
   */
  admit(s: GatewayState, a: Attempt): AttemptTicket | Promise<AttemptTicket> {
    const refused = coreRefusal(s, a);
    if (refused) return { ok: false, guard: 'gateway', error: refused };
    if (this.guards.length === 0) return ADMITTED;
    return this.from(0, s, a, []);
  }

  private from(
    i: number,
    s: GatewayState,
    a: Attempt,
    ends: Array<(use: AttemptUse) => void>,
  ): AttemptTicket | Promise<AttemptTicket> {
    for (; i < this.guards.length; i++) {
      const g = this.guards[i];
      let verdict: AttemptVerdict | Promise<AttemptVerdict>;
      try {
        verdict = g.check(s, a);
      } catch (e) {
        release(ends);
        throw e;
      }
      if (verdict instanceof Promise) {
        const next = i + 1;
        return verdict.then(
          (v) => this.settle(g, v, ends) ?? this.from(next, s, a, ends),
          (e: unknown) => {
            release(ends);
            throw e;
          },
        );
      }
      const done = this.settle(g, verdict, ends);
      if (done) return done;
    }
    return ends.length === 0 ? ADMITTED : { ok: true, end: once(ends) };
  }

  /** A refusal (after releasing the guards before it), or undefined to go on with the next guard. */
  private settle(
    g: AttemptGuard,
    v: AttemptVerdict,
    ends: Array<(use: AttemptUse) => void>,
  ): AttemptTicket | undefined {
    if (!v) return undefined;
    if ('refuse' in v) {
      release(ends);
      return { ok: false, guard: g.name, error: v.refuse };
    }
    ends.push(v.end);
    return undefined;
  }
}

function release(ends: Array<(use: AttemptUse) => void>): void {
  for (const end of ends) end({ ok: false, tokens: 0 });
}

/** The guards' ends as one function that runs them once, however often it is called. */
function once(ends: Array<(use: AttemptUse) => void>): (use: AttemptUse) => void {
  let done = false;
  return (use) => {
    if (done) return;
    done = true;
    for (const end of ends) end(use);
  };
}

/** An attempt a guard refused, in the request's attempt log (`skipped`: nothing reached the upstream). */
export function logSkipped(s: GatewayState, a: Attempt, guard: string, error: GatewayError): void {
  s.attempts.push({
    provider: a.provider.name,
    deployment: `${a.provider.name}/${a.deployment.model}`,
    model: a.model.id,
    status: 'skipped',
    guard,
    error: { code: error.code, status: error.status },
    latencyMs: 0,
  });
}
