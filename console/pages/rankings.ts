import { api, query, type Me } from '../api';
import { clear, credits, h, int, table } from '../dom';

interface App {
  app: string | null;
  requests: number;
  tokens: number;
  usage: number;
  models: Array<{ model: string | null; requests: number; tokens: number }>;
}

export async function rankingsPage(main: HTMLElement, _me: Me): Promise<void> {
  const box = h('section', { class: 'card' });
  const days = h(
    'select',
    { id: 'rankings-days', onchange: () => void load() },
    ...[
      ['1', 'today'],
      ['7', 'last 7 days'],
      ['30', 'last 30 days'],
    ].map(([v, t]) => h('option', { value: v, selected: v === '7' }, t)),
  );
  main.append(h('header', { class: 'page-head' }, h('h1', {}, 'Rankings'), h('span', { class: 'spacer' }), days), box);
  async function load(): Promise<void> {
    const r = await api<{ data: App[] }>('GET', `rankings${query({ days: days.value })}`);
    const top = Math.max(1, ...r.data.map((a) => a.tokens));
    clear(
      box,
      h('p', { class: 'muted' }, 'Apps by tokens, from the HTTP-Referer and X-Title headers their requests send.'),
      table(
        ['#', 'App', 'Tokens', '', 'Requests', 'Spend', 'Models'],
        r.data.map((a, i) => [
          document.createTextNode(String(i + 1)),
          a.app ? h('span', {}, a.app) : h('span', { class: 'muted' }, '(no app header)'),
          document.createTextNode(int(a.tokens)),
          h('meter', { min: 0, max: top, value: a.tokens }),
          document.createTextNode(int(a.requests)),
          document.createTextNode(credits(a.usage)),
          document.createTextNode(
            a.models
              .sort((x, y) => y.tokens - x.tokens)
              .map((m) => `${m.model} (${int(m.tokens)})`)
              .join(', '),
          ),
        ]),
        { id: 'rankings-table' },
      ),
    );
  }
  await load();
}
