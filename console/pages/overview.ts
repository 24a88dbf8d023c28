import { api, query } from '../api';
import { barChart, lineChart } from '../charts';
import { clear, credits, h, int, money, ms, percent, unit } from '../dom';
import type { Me } from '../api';

interface Bucket {
  t: string;
  requests: number;
  errors: number;
  timeouts: number;
  cancelled: number;
  client_errors: number;
  upstream_errors: number;
  tokens: number;
  cost: number;
  mean_latency_ms: number | null;
  max_latency_ms: number | null;
}
interface Overview {
  window: string;
  bucket_seconds: number;
  totals: Bucket;
  series: Bucket[];
  daily: Array<{ date: string; requests: number; errors: number; tokens: number; usage: number }>;
}

const WINDOWS = ['15m', '1h', '6h', '24h', '7d'];

/** A bucket's label: its time of day, or its date and hour when buckets span hours. */
function bucketLabel(iso: string, seconds: number): string {
  return seconds >= 3600 ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
}

/** The window's totals as tiles (each with an id the tests and people can find). */
function tiles(o: Overview): HTMLElement {
  const t = o.totals;
  const list: Array<[string, string, string]> = [
    ['requests', 'Requests', int(t.requests)],
    ['rps', 'Requests/s', (t.requests / (o.series.length * o.bucket_seconds)).toFixed(2)],
    ['error-rate', 'Error rate', percent(t.errors, t.requests)],
    ['upstream-errors', 'Upstream errors', int(t.upstream_errors)],
    ['timeouts', 'Timeouts', int(t.timeouts)],
    ['client-errors', 'Client errors (4xx)', int(t.client_errors)],
    ['cancelled', 'Cancelled', int(t.cancelled)],
    ['latency', 'Mean latency', ms(t.mean_latency_ms)],
    ['tokens', 'Tokens', int(t.tokens)],
    ['spend', `Spend (${unit.label})`, credits(t.cost)],
  ];
  return h(
    'div',
    { class: 'tiles' },
    ...list.map(([id, label, value]) =>
      h('div', { class: 'card tile', id: `tile-${id}` }, h('small', {}, label), h('strong', {}, value)),
    ),
  );
}

/** The window's series as charts, and the last 30 days' requests. */
function charts(o: Overview): HTMLElement {
  const s = o.series;
  const labels = s.map((b) => bucketLabel(b.t, o.bucket_seconds));
  const per = o.bucket_seconds >= 60 ? `${o.bucket_seconds / 60} min` : `${o.bucket_seconds} s`;
  const rate = s.map((b) => (b.requests ? (100 * b.errors) / b.requests : null));
  return h(
    'div',
    { class: 'grid2' },
    lineChart(`Requests per ${per}`, labels, [
      { name: 'requests', color: '#2563eb', values: s.map((b) => b.requests) },
      { name: 'errors', color: '#dc2626', values: s.map((b) => b.errors) },
    ]),
    lineChart('Error rate', labels, [{ name: 'errors / requests', color: '#dc2626', values: rate }], '%'),
    lineChart(
      'Latency',
      labels,
      [
        { name: 'mean', color: '#059669', values: s.map((b) => b.mean_latency_ms) },
        { name: 'max', color: '#d97706', values: s.map((b) => b.max_latency_ms) },
      ],
      ' ms',
    ),
    barChart('Tokens', labels, { name: 'prompt + completion', color: '#7c3aed', values: s.map((b) => b.tokens) }),
    barChart(`Spend (${unit.label})`, labels, { name: unit.label, color: '#0891b2', values: s.map((b) => b.cost) }),
    barChart(
      'Daily requests, last 30 days',
      o.daily.map((d) => d.date.slice(5)),
      { name: 'requests', color: '#2563eb', values: o.daily.map((d) => d.requests) },
    ),
  );
}

/** The overview: tiles and charts for the chosen window (kept in the address: #/overview?window=6h). */
export async function overviewPage(main: HTMLElement, me: Me): Promise<void> {
  let win = new URLSearchParams(location.hash.split('?')[1] ?? '').get('window') ?? '1h';
  const body = h('div');
  const load = async () => {
    const o = await api<Overview>('GET', `overview${query({ window: win })}`);
    clear(
      body,
      tiles(o),
      o.totals.requests === 0
        ? h(
            'p',
            { class: 'empty', id: 'overview-empty' },
            `No requests in the last ${o.window}. Send one with an account's key (Keys page: create a key), `,
            'e.g. curl /v1/chat/completions, and it shows here within a second.',
          )
        : null,
      charts(o),
    );
  };
  const select = h(
    'select',
    { id: 'overview-window', onchange: () => ((win = select.value), void load()) },
    ...WINDOWS.map((w) => h('option', { value: w, selected: w === win }, `last ${w}`)),
  );
  main.append(
    h(
      'header',
      { class: 'page-head' },
      h('h1', {}, 'Overview'),
      me.account ? h('span', { class: 'pill' }, `balance ${money(me.account.credits - me.account.usage)}`) : null,
      h('span', { class: 'spacer' }),
      select,
    ),
    body,
  );
  await load();
}
