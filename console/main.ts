import { api, ApiError, atLeast, readJson, setCsrf, type Me, type Role } from './api';
import { clear, h, notice, unit } from './dom';
import { overviewPage } from './pages/overview';
import { keysPage } from './pages/keys';
import { activityPage } from './pages/activity';
import { modelsPage } from './pages/models';
import { rankingsPage } from './pages/rankings';
import { sessionsPage, ssoPage } from './pages/sessions';
import { auditPage } from './pages/audit';
import { presetsPage } from './pages/presets';
import { cachePage } from './pages/cache';
import { mcpPage } from './pages/mcp';
import { sectionNames } from './pages/sections';
import { forgetFollower, queryFollower, route } from './route';

export type Page = (main: HTMLElement, me: Me) => Promise<void>;

/**
 * The pages; `role`: the least role that sees the page in the menu (the server checks every call anyway); `section`:
 * the admin section (another plugin's) the page needs, so that a gateway without that plugin shows no such page.
 */
const ALL_PAGES: Array<{ id: string; title: string; page: Page; role?: Role; section?: string }> = [
  { id: 'overview', title: 'Overview', page: overviewPage },
  { id: 'keys', title: 'Accounts & keys', page: keysPage },
  { id: 'activity', title: 'Activity', page: activityPage },
  { id: 'models', title: 'Models', page: modelsPage },
  { id: 'rankings', title: 'Rankings', page: rankingsPage },
  { id: 'presets', title: 'Presets', page: presetsPage, role: 'viewer', section: 'presets' },
  { id: 'cache', title: 'Cache', page: cachePage, role: 'viewer', section: 'cache' },
  { id: 'mcp', title: 'MCP', page: mcpPage, role: 'viewer', section: 'mcp' },
  { id: 'audit', title: 'Audit log', page: auditPage, role: 'viewer' },
  { id: 'sessions', title: 'Sessions', page: sessionsPage, role: 'admin' },
  { id: 'sso', title: 'Single sign-on', page: ssoPage, role: 'admin' },
];

const root = document.getElementById('app') as HTMLElement;
/** Whether the gateway offers single sign-on (told with the 401 of /console/api/me). */
let ssoOn = false;

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
          // A deep link followed before signing in (a key's settings) is where the console opens.
          if (!location.hash) location.hash = '#/overview';
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
    ssoOn
      ? h(
          'p',
          { class: 'sso' },
          h('a', { id: 'signin-sso', class: 'button', href: '/console/sso/login' }, 'Sign in with SSO'),
        )
      : null,
    message ? notice(message, 'warn') : null,
    out,
  );
  clear(root, h('div', { class: 'center' }, form));
  input.focus();
}

/** The id of the page drawn (its query changes go to the page's follower). */
let shown = '';

/** The admin sections this gateway's plugins registered (read once a sign-in). */
let sections = new Set<string>();

async function render(me: Me): Promise<void> {
  const PAGES = ALL_PAGES.filter((p) => (!p.role || atLeast(me, p.role)) && (!p.section || sections.has(p.section)));
  const id = route().page;
  // A path under /console that is not the app (a typo, an old link): the app's own not-found page.
  const stray = !/^\/console\/?$/.test(location.pathname);
  forgetFollower();
  // A record opened over the page (a dialog) closes when a link in it leads elsewhere.
  document.querySelectorAll('dialog[open]').forEach((d) => (d as HTMLDialogElement).close());
  const current = stray ? NOT_FOUND : (PAGES.find((p) => p.id === id) ?? NOT_FOUND);
  const main = h('main', { id: `page-${current.id}` });
  const nav = h(
    'nav',
    {},
    h('span', { class: 'brand' }, 'model-gateway'),
    ...PAGES.map((p) =>
      h('a', { href: `/console#/${p.id}`, class: p.id === current.id ? 'active' : null, id: `nav-${p.id}` }, p.title),
    ),
    h('span', { class: 'spacer' }),
    h(
      'span',
      { class: 'who', id: 'who' },
      me.opened_with === 'admin_key'
        ? 'signed in as admin'
        : me.opened_with === 'sso'
          ? `${me.key_label} · ${me.role}`
          : `account ${me.account?.name ?? ''}`,
      me.opened_with === 'key' ? h('small', {}, ` ${me.key_label}`) : null,
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
  shown = stray ? '' : current.id;
  document.title = `${current.title} · Gateway console`;
  try {
    await current.page(main, me);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return signIn(e.message);
    main.appendChild(notice(e instanceof Error ? e.message : String(e)));
  }
}

const NOT_FOUND = {
  id: 'not-found',
  title: 'Not found',
  page: async (main: HTMLElement) => {
    main.append(
      h('h1', {}, 'Page not found'),
      h(
        'p',
        { class: 'empty' },
        `There is no console page at ${location.pathname}${location.hash}. `,
        h('a', { href: '/console#/overview', id: 'not-found-home' }, 'Go to the overview'),
        ', or pick a page above.',
      ),
    );
  },
};

async function start(): Promise<void> {
  let me: Me;
  try {
    const r = await fetch('/console/api/me', { credentials: 'same-origin' });
    if (r.headers.get('x-console-sso')) ssoOn = r.headers.get('x-console-sso') === 'on';
    const json = (await readJson(r)) as { data: Me; error?: { code: string; message: string } };
    if (!r.ok) throw new ApiError(r.status, json.error?.code ?? 'error', json.error?.message ?? `HTTP ${r.status}`);
    me = json.data;
  } catch (e) {
    return signIn(e instanceof ApiError && e.code !== 'console_session_required' ? e.message : undefined);
  }
  setCsrf(me.csrf_token);
  unit.label = me.credit_unit ?? 'credits';
  sections = await sectionNames();
  window.onhashchange = () => {
    // The same page with another query (a deep link, Back): the page follows it, its lists stay as they are.
    const r = route();
    const follow = queryFollower();
    if (follow && r.page === shown) follow(r.query);
    else void render(me);
  };
  await render(me);
}

void start();
