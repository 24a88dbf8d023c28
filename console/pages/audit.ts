import { api, query, type Me } from '../api';
import { clear, h, notice, table, when } from '../dom';

interface AuditRecord {
  id: string;
  created_at: string;
  actor: string;
  role: string;
  source: string;
  address: string | null;
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
}

const PAGE = 50;
const SOURCES = ['admin_api', 'console', 'cli', 'oauth', 'sso', 'startup'];

/** A value of a change, short (the whole one is in the cell's title and the exports). */
function short(v: unknown): string {
  if (v === null || v === undefined) return '—';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 59)}…` : s;
}

type Filters = Record<'action' | 'actor' | 'target' | 'source', string | undefined>;

function exportLink(f: Filters, format: 'csv' | 'ndjson'): HTMLElement {
  return h(
    'a',
    {
      id: `audit-export-${format}`,
      class: 'button',
      href: `/console/api/audit${query({ ...f, format })}`,
      download: `audit.${format}`,
    },
    `Export ${format.toUpperCase()}`,
  );
}

function auditRow(r: AuditRecord): Node[] {
  return [
    document.createTextNode(when(r.created_at).slice(0, 19)),
    document.createTextNode(r.actor),
    h('span', { class: 'pill' }, r.role),
    document.createTextNode(r.source),
    document.createTextNode(r.address ?? '—'),
    h('code', {}, r.action),
    document.createTextNode(r.target ?? '—'),
    h(
      'span',
      { title: `${JSON.stringify(r.before ?? null)} → ${JSON.stringify(r.after ?? null)}` },
      `${short(r.before)} → ${short(r.after)}`,
    ),
  ];
}

const EMPTY =
  'No audit records match. Every change to accounts, keys, credits, settings and console sessions appears here ' +
  '(from the admin API, the console, the CLI, OAuth, single sign-on and startup), with who made it, from which ' +
  'address, and the value before and after.';

/** One page of the log into `box`, with the export links and Newest / Older. */
async function loadPage(box: HTMLElement, f: Filters, run: (before?: string) => void, before?: string) {
  const { data, next } = await api<{ data: AuditRecord[]; next: string | null }>(
    'GET',
    `audit${query({ ...f, before, limit: String(PAGE) })}`,
  );
  clear(
    box,
    h('header', { class: 'page-head' }, h('span', { class: 'spacer' }), exportLink(f, 'csv'), exportLink(f, 'ndjson')),
    data.length === 0
      ? h('p', { id: 'audit-empty', class: 'muted' }, before ? 'No older records.' : EMPTY)
      : table(
          ['Time', 'Actor', 'Role', 'Source', 'Address', 'Action', 'Target', 'Before → after'],
          data.map(auditRow),
          { id: 'audit-table', class: 'row-cards' },
        ),
    h(
      'p',
      { class: 'inline' },
      before ? h('button', { id: 'audit-newest', onclick: () => run() }, 'Newest') : null,
      data.length === PAGE && next ? h('button', { id: 'audit-older', onclick: () => run(next) }, 'Older') : null,
    ),
  );
}

/** The audit log (viewer role and above): who changed what, from where, newest first; filtered, paged, exported. */
export async function auditPage(main: HTMLElement, _me: Me): Promise<void> {
  const input = (id: string, label: string) =>
    h('input', { id: `audit-${id}`, placeholder: label, 'aria-label': label, class: 'small' });
  const fAction = input('action', 'action');
  const fActor = input('actor', 'actor');
  const fTarget = input('target', 'target');
  const fSource = h(
    'select',
    { id: 'audit-source', 'aria-label': 'source' },
    h('option', { value: '' }, 'any source'),
    ...SOURCES.map((s) => h('option', { value: s }, s)),
  );
  const box = h('section', { class: 'card' });
  const filters = (): Filters => ({
    action: fAction.value.trim() || undefined,
    actor: fActor.value.trim() || undefined,
    target: fTarget.value.trim() || undefined,
    source: fSource.value || undefined,
  });
  const run = (before?: string) =>
    void loadPage(box, filters(), run, before).catch((e: unknown) =>
      clear(box, notice(e instanceof Error ? e.message : String(e))),
    );
  main.append(
    h('header', { class: 'page-head' }, h('h1', {}, 'Audit log')),
    h(
      'form',
      { class: 'card inline filters', onsubmit: (e: Event) => (e.preventDefault(), run()) },
      fAction,
      fActor,
      fTarget,
      fSource,
      h('button', { id: 'audit-apply', type: 'submit', class: 'primary' }, 'Filter'),
    ),
    box,
  );
  await loadPage(box, filters(), run);
}
