/**
 * Other plugins' settings (decision 0048): the sections of GET /console/api/settings, each drawn as a form from its
 * fields, read and saved through /console/api/settings/{section}/{subject}/{id}. The console knows no plugin: a
 * section it has never seen is drawn the same way.
 */
import { api, ApiError, atLeast, type Me, type Role } from '../api';
import { clear, h, notice } from '../dom';
import { control } from './settings-control';

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

export interface Section {
  name: string;
  title: string;
  description: string | null;
  subjects: Subject[];
  fields: Field[];
  roles: { read: Role; write: Role };
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

let cached: Promise<Section[]> | undefined;

/** The sections this gateway's plugins offer (asked once per page load). */
export function loadSections(): Promise<Section[]> {
  cached ??= api<{ data: Section[] }>('GET', 'settings').then((r) => r.data);
  return cached;
}

function valueAt(v: Json | undefined, path: string): Json | undefined {
  let cur = v;
  for (const part of path.split('.')) {
    if (cur === null || cur === undefined || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

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

/** Put `v` at `path`; a nested object keeps only what is set (its nulls are left out). */
function put(body: Obj, path: string, v: Json): void {
  const parts = path.split('.');
  let cur = body;
  for (const p of parts.slice(0, -1)) cur = (cur[p] ??= {}) as Obj;
  if (v !== null || parts.length === 1) cur[parts[parts.length - 1]] = v;
}

/** A nested object with nothing set is sent as null (clear: inherit). */
function collapse(body: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(body))
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0 ? null : v;
  return out;
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

/** The server's 400 in words: the field's label before its message when the error names a field of the form. */
function readable(e: unknown, fields: Field[]): string {
  if (!(e instanceof ApiError)) return String(e);
  const named = fields.find((f) => e.message.startsWith(`${f.path} `));
  return named ? `${named.label}: ${e.message.slice(named.path.length + 1)}` : e.message;
}

/**
 * One section's form for one subject: its current value, and (with the section's write role) Save. `onSaved` is
 * told after a save (the page reloads its lists, whose Settings column changed).
 */
export async function sectionForm(
  me: Me,
  section: Section,
  subject: Subject,
  id: string,
  onSaved: () => Promise<void>,
): Promise<HTMLElement> {
  const fields = section.fields.filter((f) => !f.subjects || f.subjects.includes(subject));
  const value = (await api<{ data: Json }>('GET', `settings/${section.name}/${subject}/${encodeURIComponent(id)}`))
    .data;
  const canWrite = atLeast(me, section.roles.write);
  const out = h('div', { class: 'form-status' });
  const controls = fields.map((f, i) => control(f, valueAt(value, f.path), `set-${section.name}-${i}`, !canWrite));
  const save = async () => {
    const body: Obj = {};
    for (const [i, f] of fields.entries()) {
      const v = controls[i].read();
      if (v instanceof Error) return clear(out, notice(v.message));
      put(body, f.path, v);
    }
    try {
      await api('PUT', `settings/${section.name}/${subject}/${encodeURIComponent(id)}`, collapse(body));
      clear(out, notice(`${section.title}: saved`, 'ok'));
      await onSaved();
    } catch (e) {
      clear(out, notice(readable(e, fields)));
    }
  };
  return h(
    'form',
    {
      class: 'settings-form',
      'data-section': section.name,
      onsubmit: (e: Event) => (e.preventDefault(), void save()),
    },
    h('h3', {}, section.title),
    section.description ? h('p', { class: 'muted' }, section.description) : null,
    h(
      'div',
      { class: 'fields' },
      ...fields.map((f, i) =>
        h(
          'label',
          { for: controls[i].id, 'data-path': f.path },
          h('span', {}, f.label),
          controls[i].el,
          f.help ? h('small', { class: 'muted' }, f.help) : null,
        ),
      ),
    ),
    canWrite ? h('button', { type: 'submit', class: 'primary', 'data-save': section.name }, 'Save') : null,
    out,
  );
}
