/**
 * Other plugins' settings (decision 0048): the sections of GET /console/api/settings, each drawn as a form from its
 * fields, read and saved through /console/api/settings/{section}/{subject}/{id}. The console knows no plugin: a
 * section it has never seen is drawn the same way.
 */
import { api, ApiError, atLeast, type Me, type Role } from '../api';
import { clear, h, notice } from '../dom';
import { control } from './settings-control';
import type { Field, Json, Subject } from './settings-inputs';

export type { Subject } from './settings-inputs';

export interface Section {
  name: string;
  title: string;
  description: string | null;
  subjects: Subject[];
  fields: Field[];
  roles: { read: Role; write: Role };
}

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
