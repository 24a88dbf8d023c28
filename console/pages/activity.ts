import { api, query, type Me } from '../api';
import { append, clear, credits, h, int, ms, row, table, when } from '../dom';
import { settingsLinkTo } from './links';
import { showRecord } from './record';

interface RecordRow {
  id: string;
  created_at: string;
  account_id: string;
  api_key_hash: string | null;
  model: string;
  provider: string | null;
  tokens_prompt: number;
  tokens_completion: number;
  total_cost: number;
  latency_ms: number | null;
  status: string;
  outcome: string;
  error_code: string | null;
  streamed: boolean;
  app: string | null;
}
interface DailyRow {
  date: string;
  model: string | null;
  api_key_hash: string | null;
  app: string | null;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  usage: number;
}
interface Key {
  hash: string;
  name: string;
  label: string;
}

/** The filter controls of the page, and what they ask for. */
interface Filters {
  key: HTMLSelectElement;
  model: HTMLSelectElement;
  status: HTMLSelectElement;
  outcome: HTMLSelectElement;
  from: HTMLInputElement;
  to: HTMLInputElement;
}

/** What the page shows a key as: its name and the end of its label; its hash start when unknown. */
type KeyName = (hash: string) => string;

function select(id: string, label: string, opts: Array<[string, string]>): HTMLSelectElement {
  return h(
    'select',
    { id, 'aria-label': label },
    h('option', { value: '' }, `any ${label}`),
    ...opts.map(([v, t]) => h('option', { value: v }, t)),
  );
}

function filterControls(keys: Key[], models: string[], keyName: KeyName): Filters {
  return {
    key: select(
      'filter-key',
      'key',
      keys.map((k) => [k.hash, keyName(k.hash)]),
    ),
    model: select(
      'filter-model',
      'model',
      models.map((m) => [m, m]),
    ),
    status: select('filter-status', 'status', [
      ['completed', 'completed'],
      ['incomplete', 'incomplete'],
      ['error', 'error'],
    ]),
    // Every outcome is counted and findable: `error` is any of the three errors (the error rate's numerator).
    outcome: select('filter-outcome', 'outcome', [
      ['error', 'any error'],
      ['success', 'success'],
      ['upstream_error', 'upstream error'],
      ['timeout', 'timeout'],
      ['client_error', 'client error (4xx)'],
      ['cancelled', 'cancelled'],
    ]),
    from: h('input', { id: 'filter-from', type: 'date', 'aria-label': 'from' }),
    to: h('input', { id: 'filter-to', type: 'date', 'aria-label': 'to (inclusive)' }),
  };
}

function recordParams(f: Filters): Record<string, string | undefined> {
  // The date input names a day; the API's `to` is exclusive: the next day's midnight.
  const to = f.to.value ? new Date(Date.parse(`${f.to.value}T00:00:00Z`) + 86_400_000).toISOString() : undefined;
  return {
    key_hash: f.key.value || undefined,
    model: f.model.value || undefined,
    status: f.status.value || undefined,
    outcome: f.outcome.value || undefined,
    from: f.from.value || undefined,
    to,
  };
}

function recordRow(r: RecordRow, keyName: KeyName): Node[] {
  return [
    h(
      'a',
      {
        href: `#/activity`,
        class: 'record-link',
        'data-id': r.id,
        onclick: (e: Event) => (e.preventDefault(), void showRecord(r.id, keyName)),
      },
      when(r.created_at).slice(0, 19),
    ),
    r.api_key_hash ? settingsLinkTo('key', r.api_key_hash, keyName(r.api_key_hash)) : document.createTextNode('—'),
    document.createTextNode(r.model),
    document.createTextNode(r.app ?? ''),
    h('span', { class: `badge ${r.outcome === 'success' ? 'on' : 'off'}`, title: r.outcome }, r.error_code ?? r.status),
    document.createTextNode(int(r.tokens_prompt)),
    document.createTextNode(int(r.tokens_completion)),
    document.createTextNode(credits(r.total_cost)),
    document.createTextNode(ms(r.latency_ms)),
  ];
}

const RECORD_HEAD = ['Time (UTC)', 'Key', 'Model', 'App', 'Status', 'Prompt', 'Completion', 'Cost', 'Latency'];

/** A page of requests into `list`: the first replaces the table, the next ones ("Load more") add rows to it. */
async function loadRecords(list: HTMLElement, f: Filters, keyName: KeyName, cursor?: string): Promise<void> {
  const p = await api<{ data: RecordRow[]; next_cursor: string | null }>(
    'GET',
    `records${query({ ...recordParams(f), limit: '50', cursor })}`,
  );
  const rows = p.data.map((r) => recordRow(r, keyName));
  const next = p.next_cursor ?? undefined;
  const more = next
    ? h(
        'button',
        {
          id: 'records-more',
          onclick: (e: Event) => ((e.target as HTMLElement).remove(), void loadRecords(list, f, keyName, next)),
        },
        'Load more',
      )
    : null;
  if (cursor) {
    const body = list.querySelector('tbody') as HTMLElement;
    for (const r of rows) body.appendChild(row(RECORD_HEAD, r));
    append(list, [more]);
    return;
  }
  clear(list, h('h2', {}, 'Requests'), table(RECORD_HEAD, rows, { id: 'records-table' }), more);
  if (p.data.length === 0) list.appendChild(h('p', { class: 'muted' }, 'No requests match.'));
}

/** Daily usage under the same filters (but status and outcome, which the aggregates do not keep), with CSV export. */
async function loadDaily(daily: HTMLElement, f: Filters, keyName: KeyName): Promise<void> {
  const q = {
    key_hash: f.key.value || undefined,
    model: f.model.value || undefined,
    from: f.from.value || undefined,
    to: f.to.value || undefined,
    group_by: 'date,key,model,app',
  };
  const p = await api<{ data: DailyRow[]; next_cursor: string | null }>(
    'GET',
    `activity${query({ ...q, limit: '100' })}`,
  );
  const csv = h(
    'a',
    {
      id: 'export-csv',
      class: 'button',
      href: `/console/api/activity${query({ ...q, format: 'csv' })}`,
      download: 'activity.csv',
    },
    'Export CSV',
  );
  const rows = p.data.map((r) => [
    document.createTextNode(r.date),
    r.api_key_hash ? settingsLinkTo('key', r.api_key_hash, keyName(r.api_key_hash)) : document.createTextNode('—'),
    ...[
      r.model ?? '',
      r.app ?? '',
      int(r.requests),
      int(r.errors),
      int(r.prompt_tokens),
      int(r.completion_tokens),
      credits(r.usage),
    ].map((t) => document.createTextNode(t)),
  ]);
  clear(
    daily,
    h('header', { class: 'page-head' }, h('h2', {}, 'Daily usage'), h('span', { class: 'spacer' }), csv),
    table(['Date', 'Key', 'Model', 'App', 'Requests', 'Errors', 'Prompt', 'Completion', 'Spend'], rows, {
      id: 'daily-table',
    }),
    p.next_cursor ? h('p', { class: 'muted' }, 'More rows: narrow the filters or export CSV.') : null,
  );
}

/** Activity: the requests (a row opens its record), filtered, and daily usage. */
export async function activityPage(main: HTMLElement, _me: Me): Promise<void> {
  const keys = (await api<{ data: Key[] }>('GET', 'keys?limit=200')).data;
  const models = (await api<{ data: Array<{ id: string }> }>('GET', 'models')).data.map((m) => m.id);
  const names = new Map(keys.map((k) => [k.hash, `${k.name} (${k.label.slice(-4)})`]));
  const keyName: KeyName = (hash) => names.get(hash) ?? hash.slice(0, 8);
  const f = filterControls(keys, models, keyName);
  const list = h('section', { class: 'card' });
  const daily = h('section', { class: 'card' });
  const apply = () => Promise.all([loadRecords(list, f, keyName), loadDaily(daily, f, keyName)]);
  main.append(
    h('header', { class: 'page-head' }, h('h1', {}, 'Activity')),
    h(
      'form',
      { class: 'card inline filters', onsubmit: (e: Event) => (e.preventDefault(), void apply()) },
      f.key,
      f.model,
      f.status,
      f.outcome,
      h('label', {}, 'from ', f.from),
      h('label', {}, 'to ', f.to),
      h('button', { id: 'filter-apply', type: 'submit', class: 'primary' }, 'Apply'),
    ),
    list,
    daily,
  );
  await apply();
}
