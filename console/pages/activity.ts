import { api, query, type Me } from '../api';
import { append, clear, credits, h, int, ms, table, when } from '../dom';

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

export async function activityPage(main: HTMLElement, _me: Me): Promise<void> {
  const keys = (await api<{ data: Key[] }>('GET', 'keys?limit=200')).data;
  const models = (await api<{ data: Array<{ id: string }> }>('GET', 'models')).data.map((m) => m.id);
  const keyName = new Map(keys.map((k) => [k.hash, `${k.name} (${k.label.slice(-4)})`]));
  const sel = (id: string, label: string, opts: Array<[string, string]>) =>
    h(
      'select',
      { id, 'aria-label': label },
      h('option', { value: '' }, `any ${label}`),
      ...opts.map(([v, t]) => h('option', { value: v }, t)),
    );
  const fKey = sel(
    'filter-key',
    'key',
    keys.map((k) => [k.hash, keyName.get(k.hash) as string]),
  );
  const fModel = sel(
    'filter-model',
    'model',
    models.map((m) => [m, m]),
  );
  const fStatus = sel('filter-status', 'status', [
    ['completed', 'completed'],
    ['incomplete', 'incomplete'],
    ['error', 'error'],
  ]);
  // Every outcome is counted and findable: `error` is any of the three errors (the error rate's numerator).
  const fOutcome = sel('filter-outcome', 'outcome', [
    ['error', 'any error'],
    ['success', 'success'],
    ['upstream_error', 'upstream error'],
    ['timeout', 'timeout'],
    ['client_error', 'client error (4xx)'],
    ['cancelled', 'cancelled'],
  ]);
  const fFrom = h('input', { id: 'filter-from', type: 'date', 'aria-label': 'from' });
  const fTo = h('input', { id: 'filter-to', type: 'date', 'aria-label': 'to (inclusive)' });
  const list = h('section', { class: 'card' });
  const detail = h('aside', { id: 'record-detail', class: 'card hidden' });
  const daily = h('section', { class: 'card' });

  const params = () => {
    const to = fTo.value ? new Date(Date.parse(`${fTo.value}T00:00:00Z`) + 86_400_000).toISOString() : undefined;
    return {
      key_hash: fKey.value || undefined,
      model: fModel.value || undefined,
      status: fStatus.value || undefined,
      outcome: fOutcome.value || undefined,
      from: fFrom.value || undefined,
      to,
    };
  };

  async function open(id: string): Promise<void> {
    const r = await api<{ data: Record<string, unknown> & { response: unknown } }>(
      'GET',
      `records/${encodeURIComponent(id)}`,
    );
    const { response, ...record } = r.data;
    detail.classList.remove('hidden');
    clear(
      detail,
      h(
        'header',
        { class: 'page-head' },
        h('h2', {}, 'Request ', h('code', {}, id)),
        h('span', { class: 'spacer' }),
        h('button', { onclick: () => detail.classList.add('hidden') }, 'Close'),
      ),
      h('h3', {}, 'Record'),
      h('pre', { id: 'record-json' }, JSON.stringify(record, null, 2)),
      h('h3', {}, 'Stored response'),
      response
        ? h('pre', { id: 'record-response' }, JSON.stringify(response, null, 2))
        : h(
            'p',
            { class: 'muted' },
            'No stored response (the storage plugin is off, the request asked store: false, or it expired).',
          ),
    );
    detail.scrollIntoView({ block: 'start' });
  }

  async function loadRecords(cursor?: string): Promise<void> {
    const p = await api<{ data: RecordRow[]; next_cursor: string | null }>(
      'GET',
      `records${query({ ...params(), limit: '50', cursor })}`,
    );
    const rows = p.data.map((r) => [
      h(
        'a',
        {
          href: `#/activity`,
          class: 'record-link',
          'data-id': r.id,
          onclick: (e: Event) => (e.preventDefault(), void open(r.id)),
        },
        when(r.created_at).slice(0, 19),
      ),
      document.createTextNode(r.api_key_hash ? (keyName.get(r.api_key_hash) ?? r.api_key_hash.slice(0, 8)) : '—'),
      document.createTextNode(r.model),
      document.createTextNode(r.app ?? ''),
      h(
        'span',
        { class: `badge ${r.outcome === 'success' ? 'on' : 'off'}`, title: r.outcome },
        r.error_code ?? r.status,
      ),
      document.createTextNode(int(r.tokens_prompt)),
      document.createTextNode(int(r.tokens_completion)),
      document.createTextNode(credits(r.total_cost)),
      document.createTextNode(ms(r.latency_ms)),
    ]);
    const more = p.next_cursor
      ? h(
          'button',
          {
            id: 'records-more',
            onclick: (e: Event) => ((e.target as HTMLElement).remove(), void loadRecords(p.next_cursor ?? undefined)),
          },
          'Load more',
        )
      : null;
    if (!cursor)
      clear(
        list,
        h('h2', {}, 'Requests'),
        table(['Time (UTC)', 'Key', 'Model', 'App', 'Status', 'Prompt', 'Completion', 'Cost', 'Latency'], rows, {
          id: 'records-table',
        }),
        more,
      );
    else {
      const body = list.querySelector('tbody') as HTMLElement;
      for (const r of rows) body.appendChild(h('tr', {}, ...r.map((c) => h('td', {}, c))));
      append(list, [more]);
    }
    if (!cursor && p.data.length === 0) list.appendChild(h('p', { class: 'muted' }, 'No requests match.'));
  }

  async function loadDaily(): Promise<void> {
    const q = {
      key_hash: fKey.value || undefined,
      model: fModel.value || undefined,
      from: fFrom.value || undefined,
      to: fTo.value || undefined,
      group_by: 'date,key,model,app',
    };
    const p = await api<{ data: DailyRow[]; next_cursor: string | null }>(
      'GET',
      `activity${query({ ...q, limit: '100' })}`,
    );
    clear(
      daily,
      h(
        'header',
        { class: 'page-head' },
        h('h2', {}, 'Daily usage'),
        h('span', { class: 'spacer' }),
        h(
          'a',
          {
            id: 'export-csv',
            class: 'button',
            href: `/console/api/activity${query({ ...q, format: 'csv' })}`,
            download: 'activity.csv',
          },
          'Export CSV',
        ),
      ),
      table(
        ['Date', 'Key', 'Model', 'App', 'Requests', 'Errors', 'Prompt', 'Completion', 'Spend'],
        p.data.map((r) =>
          [
            r.date,
            r.api_key_hash ? (keyName.get(r.api_key_hash) ?? r.api_key_hash.slice(0, 8)) : '—',
            r.model ?? '',
            r.app ?? '',
            int(r.requests),
            int(r.errors),
            int(r.prompt_tokens),
            int(r.completion_tokens),
            credits(r.usage),
          ].map((t) => document.createTextNode(t)),
        ),
        { id: 'daily-table' },
      ),
      p.next_cursor ? h('p', { class: 'muted' }, 'More rows: narrow the filters or export CSV.') : null,
    );
  }

  const apply = () => Promise.all([loadRecords(), loadDaily()]);
  main.append(
    h('header', { class: 'page-head' }, h('h1', {}, 'Activity')),
    h(
      'form',
      { class: 'card inline filters', onsubmit: (e: Event) => (e.preventDefault(), void apply()) },
      fKey,
      fModel,
      fStatus,
      fOutcome,
      h('label', {}, 'from ', fFrom),
      h('label', {}, 'to ', fTo),
      h('button', { id: 'filter-apply', type: 'submit', class: 'primary' }, 'Apply'),
    ),
    h('div', { class: 'split' }, list, detail),
    daily,
  );
  await apply();
}
