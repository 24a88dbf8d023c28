/**
 * The inputs of a settings form: a field's description as the server sends it (GET /console/api/settings), the input
 * drawn for it, and the value read back from it (or a sentence saying why there is none).
 */
import { h } from '../dom';

export type Subject = 'key' | 'account' | 'gateway' | 'item';

export interface Field {
  path: string;
  label: string;
  type: 'integer' | 'number' | 'boolean' | 'choice' | 'text' | 'list' | 'numbers' | 'json';
  help?: string;
  placeholder?: string;
  /** A list whose empty list means something of its own (`no model`): not set, a list and this are three choices. */
  empty?: string;
  choices?: Array<string | number | boolean>;
  min?: number;
  max?: number;
  subjects?: Subject[];
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The text an input shows for a value (empty for null / not set). */
function shown(f: Field, v: Json | undefined): string {
  if (v === null || v === undefined) return '';
  if (f.type === 'list' || f.type === 'numbers') return Array.isArray(v) ? v.join(', ') : '';
  if (f.type === 'json') return JSON.stringify(v);
  return String(v);
}

/** What an input holds as a value, or a sentence saying why it is none. */
export function parsed(f: Field, input: HTMLInputElement | HTMLSelectElement): Json | Error {
  if (f.type === 'boolean') return (input as HTMLInputElement).checked;
  const text = input.value.trim();
  if (text === '') return null;
  const parts = () =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  switch (f.type) {
    case 'integer':
    case 'number': {
      const n = Number(text);
      if (!Number.isFinite(n) || (f.type === 'integer' && !Number.isInteger(n)))
        return new Error(`${f.label}: "${text}" is not ${f.type === 'integer' ? 'a whole number' : 'a number'}`);
      return n;
    }
    case 'numbers': {
      const ns = parts().map(Number);
      const bad = ns.findIndex((n) => !Number.isFinite(n));
      return bad >= 0 ? new Error(`${f.label}: "${parts()[bad]}" is not a number`) : ns;
    }
    case 'list':
      return parts();
    case 'choice':
      // The choice itself, not its text: `true` goes as a boolean.
      return f.choices?.find((c) => String(c) === text) ?? text;
    case 'json':
      try {
        return JSON.parse(text) as Json;
      } catch {
        return new Error(`${f.label}: not valid JSON (e.g. {"mock/*": {"rpm": 10}})`);
      }
    default:
      return text;
  }
}

export function input(
  f: Field,
  v: Json | undefined,
  id: string,
  readOnly: boolean,
): HTMLInputElement | HTMLSelectElement {
  if (f.type === 'choice')
    return h(
      'select',
      { id, disabled: readOnly },
      h('option', { value: '' }, '(not set)'),
      ...(f.choices ?? []).map((c) =>
        h('option', { value: String(c), selected: shown(f, v) === String(c) }, String(c)),
      ),
    );
  const numeric = f.type === 'integer' || f.type === 'number';
  return h('input', {
    id,
    type: f.type === 'boolean' ? 'checkbox' : numeric ? 'number' : 'text',
    checked: f.type === 'boolean' && v === true,
    value: f.type === 'boolean' ? undefined : shown(f, v),
    min: f.min,
    max: f.max,
    step: f.type === 'number' ? 'any' : undefined,
    readonly: readOnly,
    disabled: readOnly && f.type === 'boolean',
    placeholder: f.placeholder,
  });
}
