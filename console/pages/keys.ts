/**
 * The Accounts & keys page: the accounts (searched, sorted, paged on the server), the keys (of one account or all,
 * newest first, searched), and a key's or an account's settings from every plugin that offers a section. Its parts
 * are in keys/.
 */
import { ApiError, atLeast, type Me } from '../api';
import { clear, h, notice } from '../dom';
import { route, followQuery } from '../route';
import { drawAccounts, loadAccounts } from './keys/accounts-list';
import { followDetail } from './keys/detail';
import { drawKeys, loadKeys } from './keys/keys-list';
import type { KeysPage } from './keys/types';

export async function keysPage(main: HTMLElement, me: Me): Promise<void> {
  const status = h('div', { id: 'keys-status' });
  const detail = h('section', { class: 'card', id: 'detail', hidden: true });
  const accountsBox = h('section', { class: 'card', id: 'accounts-card' });
  const keysBox = h('section', { class: 'card', id: 'keys-card' });
  main.append(
    h('header', { class: 'page-head' }, h('h1', {}, atLeast(me, 'viewer') ? 'Accounts & keys' : 'Your account & keys')),
    status,
    detail,
    accountsBox,
    keysBox,
  );
  const p: KeysPage = {
    me,
    status,
    detail,
    state: {
      filter: '',
      keySearch: '',
      keys: { cursor: undefined, before: [] },
      accountSearch: '',
      accountSort: 'created:desc',
      accounts: { cursor: undefined, before: [] },
      names: new Map(),
      detailFromList: false,
    },
    say: (text, kind = 'error') => clear(status, notice(text, kind)),
    async act(fn, ok) {
      try {
        await fn();
        if (ok) p.say(ok, 'ok');
        await p.reload();
      } catch (e) {
        p.say(e instanceof ApiError ? e.message : String(e));
      }
    },
    async reload() {
      const accounts = await loadAccounts(p);
      const keys = await loadKeys(p);
      drawAccounts(p, accountsBox, accounts);
      drawKeys(p, keysBox, keys, accounts.data);
    },
  };
  await p.reload();
  // `#/keys?key=<hash>` / `?account=<id>`: a key's or an account's settings, now and as the address changes.
  if (!main.isConnected) return; // another page was drawn meanwhile: it has the address now
  followQuery((q) => void followDetail(p, q));
  await followDetail(p, route().query);
}
