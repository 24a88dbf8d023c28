/** The keys list: newest first, 50 a page, searched on the server; a row's actions and its settings. */
import { api, atLeast, query } from '../../api';
import { clear, credits, h, table } from '../../dom';
import { settingsLink, settingsText } from './detail';
import { keyActions, newKeyForm } from './forms';
import { pager, restart, searchBox } from './paging';
import type { Account, Key, KeysPage, Page } from './types';

export async function loadKeys(p: KeysPage): Promise<Page<Key>> {
  const { state } = p;
  const page = await api<Page<Key>>(
    'GET',
    `keys${query({
      account_id: state.filter || undefined,
      q: state.keySearch || undefined,
      limit: '50',
      cursor: state.keys.cursor,
    })}`,
  );
  for (const k of page.data) if (k.account_name) state.names.set(k.account_id, k.account_name);
  return page;
}

function heading(p: KeysPage): HTMLElement {
  const { state } = p;
  const all = (e: Event) => (e.preventDefault(), (state.filter = ''), restart(state.keys), void p.reload());
  return h(
    'h2',
    {},
    'API keys',
    state.filter
      ? h(
          'small',
          {},
          ` of ${state.names.get(state.filter) ?? state.filter} `,
          h('a', { href: '#/keys', onclick: all }, '(show all)'),
        )
      : null,
  );
}

function row(p: KeysPage, k: Key): Node[] {
  const operator = atLeast(p.me, 'operator');
  const text = (s: string) => document.createTextNode(s);
  return [
    text(k.name),
    h('code', {}, k.label),
    text(k.account_name ?? p.state.names.get(k.account_id) ?? k.account_id),
    text(k.limit === null ? 'none' : `${credits(k.limit)}${k.limit_reset ? ` / ${k.limit_reset}` : ''}`),
    text(credits(k.limit_remaining)),
    text(credits(k.usage)),
    h(
      'span',
      { class: `badge ${k.disabled ? 'off' : 'on'}`, 'data-key-status': k.label },
      k.disabled ? 'disabled' : 'active',
    ),
    h(
      'span',
      { class: 'settings-summary' },
      h('span', { 'data-key-summary': k.label }, settingsText(k.settings)),
      settingsLink(p, 'key', k.hash, operator ? 'Edit' : 'View', { 'data-key-settings': k.label }),
    ),
    ...(operator ? [keyActions(p, k)] : []),
  ];
}

function empty(p: KeysPage): HTMLElement {
  const q = p.state.keySearch;
  return h(
    'p',
    { class: 'empty', id: 'keys-empty' },
    q
      ? `No key matches '${q}'. Clear the search to see every key.`
      : 'No keys yet. Create one below (pick the account, give it a name); it is shown once.',
  );
}

/** Draw the keys card from one page; `accounts` fill the new key form's account choice. */
export function drawKeys(p: KeysPage, box: HTMLElement, keys: Page<Key>, accounts: Account[]): void {
  const { state } = p;
  const operator = atLeast(p.me, 'operator');
  const search = searchBox('keys-search', 'name, label or hash', state.keySearch, (q) => {
    state.keySearch = q;
    restart(state.keys);
    void p.reload();
  });
  clear(
    box,
    heading(p),
    h('div', { class: 'inline filters' }, search),
    keys.data.length === 0 ? empty(p) : null,
    table(
      ['Name', 'Key', 'Account', 'Limit', 'Remaining', 'Used', 'Status', 'Settings', ...(operator ? ['Actions'] : [])],
      keys.data.map((k) => row(p, k)),
      { id: 'keys-table', class: 'row-cards' },
    ),
    pager('keys', state.keys, keys.next_cursor, p.reload),
    operator ? newKeyForm(p, accounts) : null,
  );
}
