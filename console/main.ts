import { api, ApiError, setCsrf, type Me } from './api';
import { clear, h, notice } from './dom';
import { overviewPage } from './pages/overview';
import { keysPage } from './pages/keys';
import { activityPage } from './pages/activity';
import { modelsPage } from './pages/models';
import { rankingsPage } from './pages/rankings';

export type Page = (main: HTMLElement, me: Me) => Promise<void>;

const PAGES: Array<{ id: string; title: string; page: Page }> = [
  { id: 'overview', title: 'Overview', page: overviewPage },
  { id: 'keys', title: 'Accounts & keys', page: keysPage },
  { id: 'activity', title: 'Activity', page: activityPage },
  { id: 'models', title: 'Models', page: modelsPage },
  { id: 'rankings', title: 'Rankings', page: rankingsPage },
];

const root = document.getElementById('app') as HTMLElement;

function signIn(message?: string): void {
  const input = h('input', {
    id: 'signin-key',
    type: 'password',
    autocomplete: 'off',
    placeholder: 'sk-gw-…',
    'aria-label': 'API key',
    required: true,
  });
  const out = h('div');
  const form = h(
    'form',
    {
      class: 'card signin',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          const r = await api<{ data: { csrf_token: string } }>('POST', 'session', { key: input.value });
          setCsrf(r.data.csrf_token);
          input.value = '';
          location.hash = '#/overview';
          await start();
        } catch (err) {
          clear(out, notice(err instanceof ApiError ? err.message : 'Sign-in failed'));
        }
      },
    },
    h('h1', {}, 'Gateway console'),
    h(
      'p',
      { class: 'muted' },
      "Sign in with the admin key, or with one of an account's API keys to see that account only. The admin key was printed on the gateway's first start (or set GATEWAY_ADMIN_KEY).",
    ),
    h('label', { for: 'signin-key' }, 'API key'),
    input,
    h('button', { id: 'signin-submit', type: 'submit', class: 'primary' }, 'Sign in'),
    message ? notice(message, 'warn') : null,
    out,
  );
  clear(root, h('div', { class: 'center' }, form));
  input.focus();
}

async function render(me: Me): Promise<void> {
  const id = location.hash.replace(/^#\//, '').split('?')[0] || 'overview';
  const current = PAGES.find((p) => p.id === id) ?? PAGES[0];
  const main = h('main', { id: `page-${current.id}` });
  const nav = h(
    'nav',
    {},
    h('span', { class: 'brand' }, 'model-gateway'),
    ...PAGES.map((p) =>
      h('a', { href: `#/${p.id}`, class: p.id === current.id ? 'active' : null, id: `nav-${p.id}` }, p.title),
    ),
    h('span', { class: 'spacer' }),
    h(
      'span',
      { class: 'who', id: 'who' },
      me.is_admin ? 'signed in as admin' : `account ${me.account?.name ?? ''}`,
      me.is_admin ? null : h('small', {}, ` ${me.key_label}`),
    ),
    h(
      'button',
      {
        id: 'signout',
        onclick: async () => {
          await api('DELETE', 'session').catch(() => undefined);
          signIn();
        },
      },
      'Sign out',
    ),
  );
  clear(root, nav, main);
  document.title = `${current.title} · Gateway console`;
  try {
    await current.page(main, me);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return signIn(e.message);
    main.appendChild(notice(e instanceof Error ? e.message : String(e)));
  }
}

async function start(): Promise<void> {
  let me: Me;
  try {
    me = (await api<{ data: Me }>('GET', 'me')).data;
  } catch (e) {
    return signIn(e instanceof ApiError && e.code !== 'console_session_required' ? e.message : undefined);
  }
  setCsrf(me.csrf_token);
  window.onhashchange = () => void render(me);
  await render(me);
}

void start();
