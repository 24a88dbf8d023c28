import { api, ApiError, type Me } from '../api';
import { clear, h, notice, table, when } from '../dom';

interface Session {
  id: string;
  role: string;
  opened_with: string;
  subject: string;
  account_id: string | null;
  label: string;
  address: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  current: boolean;
}

/** The open console sessions (admin role): who, how opened, from where; each can be revoked (ended everywhere). */
export async function sessionsPage(main: HTMLElement, _me: Me): Promise<void> {
  const box = h('div');
  const out = h('div');
  clear(main, h('header', { class: 'page-head' }, h('h1', {}, 'Sessions')), out, box);
  const load = async () => {
    const { data } = await api<{ data: Session[] }>('GET', 'sessions');
    const revoke = (s: Session) =>
      h(
        'button',
        {
          class: 'revoke',
          'data-session': s.id,
          onclick: async () => {
            try {
              await api('DELETE', `sessions/${encodeURIComponent(s.id)}`);
              clear(out, notice(`Session ${s.id} revoked`, 'ok'));
              await load();
            } catch (e) {
              clear(out, notice(e instanceof ApiError ? e.message : String(e)));
            }
          },
        },
        s.current ? 'Revoke (this one)' : 'Revoke',
      );
    clear(
      box,
      table(
        ['Who', 'Role', 'Opened with', 'Address', 'Opened', 'Last seen', 'Expires', ''],
        data.map((s) => [
          h('span', {}, s.label, s.account_id ? h('small', {}, ` ${s.account_id}`) : null),
          h('span', { class: 'pill' }, s.role),
          document.createTextNode(s.opened_with),
          document.createTextNode(s.address ?? '—'),
          document.createTextNode(when(s.created_at).slice(0, 16)),
          document.createTextNode(when(s.last_seen_at).slice(0, 16)),
          document.createTextNode(when(s.expires_at).slice(0, 16)),
          revoke(s),
        ]),
        { id: 'sessions-table' },
      ),
    );
  };
  await load();
}

interface SsoSettings {
  issuer: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string | null;
  scopes: string[];
  role_claim: string;
  roles: Record<string, string>;
  default_role: string | null;
}

/** Single sign-on's settings (admin role; read-only: they live in the YAML config). */
export async function ssoPage(main: HTMLElement, _me: Me): Promise<void> {
  clear(main, h('header', { class: 'page-head' }, h('h1', {}, 'Single sign-on')));
  let s: SsoSettings;
  try {
    s = (await api<{ data: SsoSettings }>('GET', 'sso')).data;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return void main.appendChild(notice(e.message, 'warn'));
    throw e;
  }
  const row = (k: string, v: string) => [document.createTextNode(k), h('code', {}, v)];
  main.appendChild(
    table(
      ['Setting', 'Value'],
      [
        row('issuer', s.issuer),
        row('client_id', s.client_id),
        row('client_secret', s.client_secret),
        row('redirect_uri', s.redirect_uri ?? '(this gateway’s /console/sso/callback)'),
        row('scopes', s.scopes.join(' ')),
        row('role_claim', s.role_claim),
        ...Object.entries(s.roles).map(([claim, role]) => row(`roles.${claim}`, role)),
        row('default_role', s.default_role ?? '(none: unmapped users are refused)'),
      ],
      { id: 'sso-settings' },
    ),
  );
}
