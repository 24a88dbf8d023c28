import type { ChatRequest } from '../../types/openai';

/**
 * How one OpenAI request field reaches a provider. A parameter table maps every field an
 * adapter accepts (beyond model and messages) to one of these; a field not in the table
 * is not accepted (the params plugin drops and names it).
 * - `send`: sent under a name (its own or the provider's), the value as is or transformed;
 *   a transform that gives `undefined` sends nothing.
 * - `own`: mapped by the adapter's request code (messages, tools, formats, reasoning), which says how.
 * - `drop`: accepted, but the provider has no such setting: nothing is sent.
 */
export type ParamRule =
  | { kind: 'send'; to?: string; value?: (v: unknown, req: ChatRequest) => unknown }
  | { kind: 'own'; note: string }
  | { kind: 'drop'; note: string };

export type ParamTable = Readonly<Record<string, ParamRule>>;

/** Sent under the provider's name for it. */
export const rename = (to: string): ParamRule => ({ kind: 'send', to });
/** Sent under the same name, as is. */
export const keep: ParamRule = { kind: 'send' };
/** Sent under `to`, the value transformed (undefined: nothing is sent). */
export const transform = (to: string, value: (v: unknown, req: ChatRequest) => unknown): ParamRule => ({
  kind: 'send',
  to,
  value,
});
/** Mapped by the adapter's request code; `note` says where it goes. */
export const own = (note: string): ParamRule => ({ kind: 'own', note });
/** Accepted and not sent; `note` says why. */
export const drop = (note: string): ParamRule => ({ kind: 'drop', note });

/** The fields a table accepts: the adapter's `supportedParams`. */
export function paramNames(table: ParamTable): string[] {
  return Object.keys(table);
}

/**
 * Write every `send` rule's field the request carries (not undefined) into `out`,
 * in table order. When two fields send to the same name, the first one present wins
 * (a table lists max_completion_tokens before max_tokens).
 */
export function applyParams(
  req: ChatRequest,
  table: ParamTable,
  out: Record<string, unknown>,
): Record<string, unknown> {
  const written = new Set<string>();
  for (const [field, rule] of Object.entries(table)) {
    const raw = req[field];
    if (rule.kind !== 'send' || raw === undefined) continue;
    const to = rule.to ?? field;
    if (written.has(to)) continue;
    const value = rule.value ? rule.value(raw, req) : raw;
    if (value === undefined) continue;
    out[to] = value;
    written.add(to);
  }
  return out;
}
