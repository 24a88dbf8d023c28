import { api, ApiError, atLeast, query, type Me } from '../api';
import { clear, credits, h, notice, table, when } from '../dom';

interface Account {
  id: string;
  name: string;
  email: string | null;
  credits: number;
  usage: number;
  created_at: string;
}
interface Key {
  hash: string;
  name: string;
  label: string;
  account_id: string;
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: string | null;
  usage: number;
  disabled: boolean;
  expires_at: string | null;
  created_at: string;
}
interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

function errText(e: unknown): string {
  return e instanceof ApiError ? e.message : String(e);
}

export async function keysPage(main: HTMLElement, me: Me): Promise<void> {
  const status = h('div', { id: 'keys-status' });
  const accountsBox = h('section', { class: 'card' });
  const keysBox = h('section', { class: 'card' });
  let filter = '';
  let search = '';
  let keysCursor: string | undefined;
  /** The cursors of the pages before this one ("Newer" goes back). */
  let pages: Array<string | undefined> = [];
  main.append(
    h('header', { class: 'page-head' }, h('h1', {}, atLeast(me, 'viewer') ? 'Accounts & keys' : 'Your account & keys')),
    status,
    accountsBox,
    keysBox,
  );
  const say = (text: string, kind: 'error' | 'ok' | 'warn' = 'error') => clear(status, notice(text, kind));

  async function act(fn: () => Promise<unknown>, ok?: string): Promise<void> {
    try {
      await fn();
      if (ok) say(ok, 'ok');
      await load();
    } catch (e) {
      say(errText(e));
    }
  }

  async function loadAccounts(): Promise<Account[]> {
    const all: Account[] = [];
    let cursor: string | undefined;
    do {
      const p = await api<Page<Account>>('GET', `accounts${query({ limit: '200', cursor })}`);
      all.push(...p.data);
      cursor = p.next_cursor ?? undefined;
    } while (cursor && all.length < 1000);
    return all;
  }

  async function load(): Promise<void> {
    const accounts = await loadAccounts();
    const names = new Map(accounts.map((a) => [a.id, a.name]));
    const topUp = (a: Account) => {
      const amount = h('input', {
        type: 'number',
        step: 'any',
        min: '-9000000',
        placeholder: 'credits',
        class: 'small',
        'aria-label': `credits for ${a.name}`,
      });
      return h(
        'form',
        {
          class: 'inline',
          onsubmit: (e: Event) => (
            e.preventDefault(),
            void act(
              () => api('POST', `accounts/${encodeURIComponent(a.id)}/credits`, { amount: Number(amount.value) }),
              `Added ${amount.value} credits to ${a.name}`,
            )
          ),
        },
        amount,
        h('button', { type: 'submit' }, 'Top up'),
      );
    };
    clear(
      accountsBox,
      h('h2', {}, 'Accounts'),
      table(
        ['Name', 'Id', 'Credits', 'Used', 'Balance', 'Created', ...(atLeast(me, 'operator') ? ['Top up'] : [])],
        accounts.map((a) =>
          [
            h(
              'a',
              { href: '#/keys', onclick: (e: Event) => (e.preventDefault(), (filter = a.id), void load()) },
              a.name,
            ),
            h('code', {}, a.id),
            credits(a.credits),
            credits(a.usage),
            credits(a.credits - a.usage),
            when(a.created_at).slice(0, 16),
            ...(atLeast(me, 'operator') ? [topUp(a)] : []),
          ].map((c) => (typeof c === 'string' ? document.createTextNode(c) : c)),
        ),
        { id: 'accounts-table' },
      ),
      atLeast(me, 'operator') ? newAccountForm() : null,
    );

    // Newest first, 50 a page, searched on the server: every key is reachable however many there are.
    const keys = await api<Page<Key>>(
      'GET',
      `keys${query({ account_id: filter || undefined, q: search || undefined, limit: '50', cursor: keysCursor })}`,
    );
    const searchBox = h('input', {
      id: 'keys-search',
      type: 'search',
      placeholder: 'name, label or hash',
      'aria-label': 'search keys',
      value: search,
      onchange: () => ((search = searchBox.value.trim()), (keysCursor = undefined), (pages = []), void load()),
    });
    const accountSelect = h(
      'select',
      { id: 'key-account', 'aria-label': 'account' },
      ...accounts.map((a) => h('option', { value: a.id, selected: a.id === filter }, a.name)),
    );
    clear(
      keysBox,
      h(
        'h2',
        {},
        'API keys',
        filter
          ? h(
              'small',
              {},
              ` of ${names.get(filter) ?? filter} `,
              h(
                'a',
                { href: '#/keys', onclick: (e: Event) => (e.preventDefault(), (filter = ''), void load()) },
                '(show all)',
              ),
            )
          : null,
      ),
      h(
        'div',
        { class: 'inline filters' },
        searchBox,
        pages.length ? h('span', { class: 'muted' }, `page ${pages.length + 1}`) : null,
      ),
      keys.data.length === 0
        ? h(
            'p',
            { class: 'empty', id: 'keys-empty' },
            search
              ? `No key matches '${search}'. Clear the search to see every key.`
              : 'No keys yet. Create one below (pick the account, give it a name); it is shown once.',
          )
        : null,
      table(
        [
          'Name',
          'Key',
          'Account',
          'Limit',
          'Remaining',
          'Used',
          'Status',
          ...(atLeast(me, 'operator') ? ['Actions'] : []),
        ],
        keys.data.map((k) => [
          document.createTextNode(k.name),
          h('code', {}, k.label),
          document.createTextNode(names.get(k.account_id) ?? k.account_id),
          document.createTextNode(
            k.limit === null ? 'none' : `${credits(k.limit)}${k.limit_reset ? ` / ${k.limit_reset}` : ''}`,
          ),
          document.createTextNode(credits(k.limit_remaining)),
          document.createTextNode(credits(k.usage)),
          h(
            'span',
            { class: `badge ${k.disabled ? 'off' : 'on'}`, 'data-key-status': k.label },
            k.disabled ? 'disabled' : 'active',
          ),
          ...(atLeast(me, 'operator') ? [keyActions(k)] : []),
        ]),
        { id: 'keys-table' },
      ),
      h(
        'div',
        { class: 'inline' },
        pages.length
          ? h('button', { id: 'keys-newer', onclick: () => ((keysCursor = pages.pop()), void load()) }, 'Newer')
          : null,
        keys.next_cursor
          ? h(
              'button',
              {
                id: 'keys-older',
                onclick: () => (pages.push(keysCursor), (keysCursor = keys.next_cursor ?? undefined), void load()),
              },
              'Older',
            )
          : null,
      ),
      atLeast(me, 'operator') ? newKeyForm(accountSelect) : null,
    );
  }

  function keyActions(k: Key): HTMLElement {
    const limit = h('input', {
      type: 'number',
      step: 'any',
      min: '0',
      placeholder: 'limit',
      class: 'small',
      value: k.limit ?? '',
      'aria-label': `limit of ${k.name}`,
    });
    const reset = h(
      'select',
      { 'aria-label': `limit reset of ${k.name}` },
      ...[
        ['', 'never resets'],
        ['daily', 'daily'],
        ['weekly', 'weekly'],
        ['monthly', 'monthly'],
      ].map(([v, t]) => h('option', { value: v, selected: (k.limit_reset ?? '') === v }, t)),
    );
    return h(
      'div',
      { class: 'inline' },
      h(
        'button',
        {
          'data-toggle-key': k.label,
          onclick: () =>
            void act(
              () => api('PATCH', `keys/${k.hash}`, { disabled: !k.disabled }),
              `${k.name} ${k.disabled ? 'enabled' : 'disabled'}`,
            ),
        },
        k.disabled ? 'Enable' : 'Disable',
      ),
      limit,
      reset,
      deleteButton(k),
      h(
        'button',
        {
          onclick: () =>
            void act(
              () =>
                api('PATCH', `keys/${k.hash}`, {
                  limit: limit.value === '' ? null : Number(limit.value),
                  limit_reset: reset.value || null,
                }),
              `Limit of ${k.name} saved`,
            ),
        },
        'Set limit',
      ),
    );
  }

  /** Delete takes two clicks: the first asks, the second deletes (the key stops working at once). */
  function deleteButton(k: Key): HTMLElement {
    const b = h('button', { 'data-delete-key': k.label, class: 'danger' }, 'Delete');
    b.addEventListener('click', () => {
      if (b.dataset.armed !== 'yes') {
        b.dataset.armed = 'yes';
        b.textContent = 'Delete for good?';
        return;
      }
      void act(() => api('DELETE', `keys/${k.hash}`), `${k.name} deleted: it no longer works`);
    });
    return b;
  }

  function newAccountForm(): HTMLElement {
    const name = h('input', {
      id: 'new-account-name',
      placeholder: 'name',
      required: true,
      'aria-label': 'account name',
    });
    const cr = h('input', {
      id: 'new-account-credits',
      type: 'number',
      step: 'any',
      min: '0',
      placeholder: 'credits',
      'aria-label': 'credits',
    });
    return h(
      'form',
      {
        class: 'inline create',
        onsubmit: (e: Event) => (
          e.preventDefault(),
          void act(
            () => api('POST', 'accounts', { name: name.value, credits: Number(cr.value || 0) }),
            `Account ${name.value} created`,
          )
        ),
      },
      h('strong', {}, 'New account'),
      name,
      cr,
      h('button', { id: 'new-account-submit', type: 'submit', class: 'primary' }, 'Create account'),
    );
  }

  function newKeyForm(accountSelect: HTMLSelectElement): HTMLElement {
    const name = h('input', { id: 'new-key-name', placeholder: 'key name', required: true, 'aria-label': 'key name' });
    const limit = h('input', {
      id: 'new-key-limit',
      type: 'number',
      step: 'any',
      min: '0',
      placeholder: 'limit (optional)',
      'aria-label': 'credit limit',
    });
    const reset = h(
      'select',
      { id: 'new-key-reset', 'aria-label': 'limit reset' },
      h('option', { value: '' }, 'never resets'),
      ...['daily', 'weekly', 'monthly'].map((r) => h('option', { value: r }, r)),
    );
    return h(
      'form',
      {
        class: 'inline create',
        onsubmit: async (e: Event) => {
          e.preventDefault();
          try {
            const r = await api<{ key: string; data: Key }>('POST', 'keys', {
              account_id: accountSelect.value,
              name: name.value,
              limit: limit.value === '' ? null : Number(limit.value),
              limit_reset: reset.value || null,
            });
            await load();
            clear(
              status,
              h(
                'div',
                { class: 'notice warn once', id: 'new-key' },
                h('strong', {}, `Key "${r.data.name}" created. It is shown once: copy it now.`),
                h('code', { id: 'new-key-value' }, r.key),
              ),
            );
          } catch (err) {
            say(errText(err));
          }
        },
      },
      h('strong', {}, 'New key'),
      accountSelect,
      name,
      limit,
      reset,
      h('button', { id: 'new-key-submit', type: 'submit', class: 'primary' }, 'Create key'),
    );
  }

  await load();
}
