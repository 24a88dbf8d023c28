/**
 * @module
 * One request's guard: runs a side's checks over a text (block throws, flag records, redact replaces each match
 * with its placeholder), and records every action once per rule, side and action (the state's `guardrails`, which
 * the generation record keeps, and the counters). Never records or logs a matched value.
 */
import { errors, type GatewayState, type GuardrailEvent } from '../../src/plugin';
import type { GuardrailsMetrics } from './metrics';
import type { Check, RequestPolicy } from './policy';
import { Redactor } from './redactor';

type Side = GuardrailEvent['side'];
type Action = GuardrailEvent['action'];

interface Span {
  start: number;
  end: number;
  label: string;
  rule: string;
}

export class GuardRun {
  readonly redactor = new Redactor();

  constructor(
    readonly policy: RequestPolicy,
    private readonly s: GatewayState,
    private readonly metrics: GuardrailsMetrics,
  ) {}

  record(rule: string, side: Side, action: Action, count: number): void {
    this.metrics.actions.inc({ rule, side, action }, count);
    const events = (this.s.guardrails ??= []);
    const had = events.find((e) => e.rule === rule && e.side === side && e.action === action);
    if (had) had.count += count;
    else events.push({ rule, side, action, count });
  }

  /** The text as it goes on: the side's checks run over it (checks come strictest first, so a block ends early). */
  scan(text: string, side: Side): string {
    const checks = side === 'input' ? this.policy.input : this.policy.output;
    if (checks.length === 0 || text.length === 0) return text;
    let lower: string | undefined;
    const spans: Span[] = [];
    for (const c of checks) {
      const keywords = c.detector.keywords;
      if (keywords) {
        lower ??= text.toLowerCase();
        const l = lower;
        if (!keywords.some((k) => l.includes(k))) continue;
      }
      const found = c.detector.find(text);
      if (found.length === 0) continue;
      if (c.action === 'block') {
        this.record(c.rule, side, 'block', found.length);
        throw errors.guardrailBlocked(c.rule, side);
      }
      if (c.action === 'flag') this.record(c.rule, side, 'flag', found.length);
      else for (const m of found) spans.push({ start: m.start, end: m.end, label: c.detector.label, rule: c.rule });
    }
    return spans.length === 0 ? text : this.replace(text, spans, side);
  }

  /** Each span by its placeholder; of overlapping spans the first (then the longest) wins. */
  private replace(text: string, spans: Span[], side: Side): string {
    spans.sort((a, b) => a.start - b.start || b.end - a.end);
    const counts = new Map<string, number>();
    let out = '';
    let at = 0;
    for (const sp of spans) {
      if (sp.start < at) continue;
      out +=
        text.slice(at, sp.start) + this.redactor.placeholder(sp.label, text.slice(sp.start, sp.end), side === 'input');
      at = sp.end;
      counts.set(sp.rule, (counts.get(sp.rule) ?? 0) + 1);
    }
    for (const [rule, n] of counts) this.record(rule, side, 'redact', n);
    return out + text.slice(at);
  }

  /** Output text as the client gets it: the output checks, then the input's values restored. */
  answer(text: string): string {
    return this.redactor.rehydrate(this.scan(text, 'output'));
  }
}

/** A check list strictest first. */
export function strictestFirst(checks: Check[]): Check[] {
  const rank = { block: 0, redact: 1, flag: 2 } as const;
  return checks.sort((a, b) => rank[a.action] - rank[b.action]);
}
