/** The accounts list: searched, sorted and paged on the server (GET /console/api/accounts), newest first. */
import { api, atLeast, query } from '../../api';
import { clear, credits, h, table, when } from '../../dom';
import { settingsLink, settingsText } from './detail';
import { newAccountForm, topUpForm } from './forms';
import { pager, restart, searchBox } from './paging';
import type { Account, KeysPage, Page } from './types';

const SORTS: Array<[string, string]> = [
  ['created:desc', 'Newest first'],
  ['created:asc', 'Oldest first'],
  ['name:asc', 'Name A-Z'],
  ['name:desc', 'Name Z-A'],
  ['balance:desc', 'Largest balance'],
  ['balance:asc', 'Smallest balance'],
];

export async function loadAccounts(p: KeysPage): Promise<Page<Account>> {
  const { state } = p;
  const [sort, dir] = state.accountSort.split(':');
  const page = await api<Page<Account>>(
    'GET',
    `accounts${query({ q: state.accountSearch || undefined, sort, dir, limit: '50', cursor: state.accounts.cursor })}`,
  );
  for (const a of page.data) state.names.set(a.id, a.name);
  return page;
}

function controls(p: KeysPage, total: number | undefined): HTMLElement {
  const { state } = p;
  const again = () => (restart(state.accounts), void p.reload());
  const sort = h(
    'select',
    {
      id: 'accounts-sort',
      'aria-label': 'sort accounts',
      onchange: () => ((state.accountSort = sort.value), again()),
    },
    ...SORTS.map(([v, t]) => h('option', { value: v, selected: v === state.accountSort }, t)),
  );
  return h(
    'div',
    { class: 'inline filters' },
    searchBox('accounts-search', 'search accounts: name or id', state.accountSearch, (q) => {
      state.accountSearch = q;
      again();
    }),
    sort,
    h(
      'span',
      { class: 'muted', id: 'accounts-total' },
      total === undefined ? '' : `${total} account${total === 1 ? '' : 's'}`,
    ),
  );
}

function row(p: KeysPage, a: Account): Node[] {
  const operator = atLeast(p.me, 'operator');
  const pick = (e: Event) => {
    e.preventDefault();
    p.state.filter = a.id;
    restart(p.state.keys);
    void p.reload();
  };
  return [
    h('a', { href: '#/keys', onclick: pick, 'data-account': a.name }, a.name),
    h('code', {}, a.id),
    document.createTextNode(credits(a.credits)),
    document.createTextNode(credits(a.usage)),
    document.createTextNode(credits(a.credits - a.usage)),
    document.createTextNode(when(a.created_at).slice(0, 16)),
    h(
      'span',
      { class: 'settings-summary' },
      h('span', { 'data-account-summary': a.name }, settingsText(a.settings)),
      settingsLink(p, 'account', a.id, operator ? 'Edit settings' : 'Settings', { 'data-account-settings': a.name }),
    ),
    ...(operator ? [topUpForm(p, a)] : []),
  ];
}

/** Draw the accounts card from one page. */
export function drawAccounts(p: KeysPage, box: HTMLElement, page: Page<Account>): void {
  const operator = atLeast(p.me, 'operator');
  clear(
    box,
    h('h2', {}, 'Accounts'),
    atLeast(p.me, 'viewer') ? controls(p, page.total) : null,
    page.data.length === 0 && p.state.accountSearch
      ? h('p', { class: 'empty', id: 'accounts-empty' }, `No account matches '${p.state.accountSearch}'.`)
      : null,
    table(
      ['Name', 'Id', 'Credits', 'Used', 'Balance', 'Created', 'Settings', ...(operator ? ['Top up'] : [])],
      page.data.map((a) => row(p, a)),
      { id: 'accounts-table', class: 'row-cards' },
    ),
    pager('accounts', p.state.accounts, page.next_cursor, p.reload),
    operator ? newAccountForm(p) : null,
  );
}
