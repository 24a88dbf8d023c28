/**
 * Calls to other plugins' admin sections (/console/api/settings/..., decision 0048): the console knows a plugin only
 * by the section it registered. Shared by the Presets, Cache and MCP pages.
 */
import { api, query } from '../api';
import { h } from '../dom';

export interface SectionInfo {
  name: string;
  title: string;
  description: string | null;
  subjects: string[];
  roles: { read: string; write: string };
  actions: Array<{ name: string; title: string; description: string | null; role: string }>;
  views?: Array<{ name: string; title: string; description: string | null }>;
}

const path = (...parts: string[]) => `settings/${parts.map(encodeURIComponent).join('/')}`;

/** The sections this gateway's plugins registered (the nav shows a page only when its section is there). */
export async function sectionNames(): Promise<Set<string>> {
  const r = await api<{ data: SectionInfo[] }>('GET', 'settings').catch(() => ({ data: [] as SectionInfo[] }));
  return new Set(r.data.map((s) => s.name));
}

export const section = {
  items: async <T>(name: string) =>
    (await api<{ data: Array<{ id: string; value: T }> }>('GET', path(name, 'item'))).data,
  read: async <T>(name: string, subject: string, id: string) =>
    (await api<{ data: T }>('GET', path(name, subject, id))).data,
  write: async <T>(name: string, subject: string, id: string, body: unknown) =>
    (await api<{ data: T }>('PUT', path(name, subject, id), body)).data,
  remove: (name: string, id: string) => api('DELETE', path(name, 'item', id)),
  action: async <T>(name: string, action: string, body: unknown) =>
    (await api<{ data: T }>('POST', path(name, 'actions', action), body)).data,
  view: <T>(name: string, view: string, q: Record<string, string | undefined>) =>
    api<{ data: T[]; next: string | null }>('GET', `${path(name, 'views', view)}${query(q)}`),
};

/** A button that asks before it acts: the first click arms it (its text says what will happen), the second runs. */
export function confirmButton(
  attrs: Record<string, string>,
  label: string,
  confirmLabel: () => string,
  run: () => void,
): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'danger', ...attrs }, label);
  b.addEventListener('click', () => {
    if (b.dataset.armed !== 'yes') {
      b.dataset.armed = 'yes';
      b.textContent = confirmLabel();
      return;
    }
    b.dataset.armed = '';
    b.textContent = label;
    run();
  });
  return b;
}

/** A labelled input for a form: the label above the control, a help line below. */
export function field(label: string, control: HTMLElement, help?: string): HTMLElement {
  return h(
    'label',
    { class: 'field' },
    h('span', {}, label),
    control,
    help ? h('small', { class: 'muted' }, help) : null,
  );
}

/** Text that is JSON, parsed; empty: undefined; not JSON: an Error that says which field. */
export function jsonOf(text: string, what: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${what} is not valid JSON`);
  }
}

/** Comma-separated text as a list; empty: undefined. */
export function listOf(text: string): string[] | undefined {
  const l = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return l.length ? l : undefined;
}
