import { api, query } from '../api';
import { barChart, lineChart } from '../charts';
import { clear, credits, h, int, ms } from '../dom';
import type { Me } from '../api';

interface Bucket {
  t: string;
  requests: number;
  errors: number;
  p50: number | null;
  p99: number | null;
  tokens: number;
  cost: number;
}
interface Overview {
  window: string;
  bucket_seconds: number;
  truncated: boolean;
  series: Bucket[];
  daily: Array<{ date: string; requests: number; errors: number; tokens: number; usage: number }>;
}

function pct(values: number[], p: number): number | null {
  const v = values.filter((x) => x !== null).sort((a, b) => a - b);
  return v.length ? v[Math.min(v.length - 1, Math.ceil(p * v.length) - 1)] : null;
}

export async function overviewPage(main: HTMLElement, me: Me): Promise<void> {
  let win = new URLSearchParams(location.hash.split('?')[1] ?? '').get('window') ?? '1h';
  const body = h('div');
  const select = h(
    'select',
    { id: 'overview-window', onchange: () => ((win = select.value), void load()) },
    ...['15m', '1h', '6h', '24h'].map((w) => h('option', { value: w, selected: w === win }, `last ${w}`)),
  );
  main.append(
    h(
      'header',
      { class: 'page-head' },
      h('h1', {}, 'Overview'),
      me.account
        ? h('span', { class: 'pill' }, `balance ${credits(me.account.credits - me.account.usage)} credits`)
        : null,
      h('span', { class: 'spacer' }),
      select,
    ),
    body,
  );

  async function load(): Promise<void> {
    const o = await api<Overview>('GET', `overview${query({ window: win })}`);
    const s = o.series;
    const labels = s.map((b) => b.t.slice(11, 16));
    const total = s.reduce((a, b) => a + b.requests, 0);
    const errs = s.reduce((a, b) => a + b.errors, 0);
    const spend = s.reduce((a, b) => a + b.cost, 0);
    const tokens = s.reduce((a, b) => a + b.tokens, 0);
    const p50s = s.map((b) => b.p50).filter((v): v is number => v !== null);
    const p99s = s.map((b) => b.p99).filter((v): v is number => v !== null);
    const tiles: Array<[string, string, string]> = [
      ['requests', 'Requests', int(total)],
      ['rps', 'Requests/s', String(Number((total / (s.length * o.bucket_seconds)).toPrecision(2)))],
      ['error-rate', 'Error rate', total ? `${((errs / total) * 100).toFixed(1)}%` : '—'],
      ['p50', 'p50 latency', ms(pct(p50s, 0.5))],
      ['p99', 'p99 latency', ms(p99s.length ? Math.max(...p99s) : null)],
      ['tokens', 'Tokens', int(tokens)],
      ['spend', 'Spend', credits(spend)],
    ];
    clear(
      body,
      h(
        'div',
        { class: 'tiles' },
        ...tiles.map(([id, label, value]) =>
          h('div', { class: 'card tile', id: `tile-${id}` }, h('small', {}, label), h('strong', {}, value)),
        ),
      ),
      o.truncated ? h('p', { class: 'muted' }, 'Busy window: the charts show the newest 20,000 requests.') : null,
      h(
        'div',
        { class: 'grid2' },
        lineChart(
          `Requests per ${o.bucket_seconds >= 60 ? `${o.bucket_seconds / 60} min` : `${o.bucket_seconds} s`}`,
          labels,
          [
            { name: 'requests', color: '#2563eb', values: s.map((b) => b.requests) },
            { name: 'errors', color: '#dc2626', values: s.map((b) => b.errors) },
          ],
        ),
        lineChart(
          'Error rate',
          labels,
          [
            {
              name: 'errors / requests',
              color: '#dc2626',
              values: s.map((b) => (b.requests ? (100 * b.errors) / b.requests : null)),
            },
          ],
          '%',
        ),
        lineChart(
          'Latency',
          labels,
          [
            { name: 'p50', color: '#059669', values: s.map((b) => b.p50) },
            { name: 'p99', color: '#d97706', values: s.map((b) => b.p99) },
          ],
          ' ms',
        ),
        barChart('Tokens', labels, { name: 'prompt + completion', color: '#7c3aed', values: s.map((b) => b.tokens) }),
        barChart('Spend (credits)', labels, { name: 'credits', color: '#0891b2', values: s.map((b) => b.cost) }),
        barChart(
          'Daily requests, last 30 days',
          o.daily.map((d) => d.date.slice(5)),
          { name: 'requests', color: '#2563eb', values: o.daily.map((d) => d.requests) },
        ),
      ),
    );
  }
  await load();
}
