/** The Accounts & keys page's forms: new account, top-up, new key (shown once), a key's actions and delete. */
import { api } from '../../api';
import { clear, h } from '../../dom';
import type { Account, Key, KeysPage } from './types';

export function topUpForm(p: KeysPage, a: Account): HTMLElement {
  const amount = h('input', {
    type: 'number',
    step: 'any',
    min: '-9000000',
    placeholder: 'credits',
    class: 'small',
    'aria-label': `credits for ${a.name}`,
  });
  const submit = (e: Event) => {
    e.preventDefault();
    void p.act(
      () => api('POST', `accounts/${encodeURIComponent(a.id)}/credits`, { amount: Number(amount.value) }),
      `Added ${amount.value} credits to ${a.name}`,
    );
  };
  return h('form', { class: 'inline', onsubmit: submit }, amount, h('button', { type: 'submit' }, 'Top up'));
}

const RESETS: Array<[string, string]> = [
  ['', 'never resets'],
  ['daily', 'daily'],
  ['weekly', 'weekly'],
  ['monthly', 'monthly'],
];

/** Enable/disable, the credit limit and its reset, delete. */
export function keyActions(p: KeysPage, k: Key): HTMLElement {
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
    ...RESETS.map(([v, t]) => h('option', { value: v, selected: (k.limit_reset ?? '') === v }, t)),
  );
  const toggle = () =>
    p.act(
      () => api('PATCH', `keys/${k.hash}`, { disabled: !k.disabled }),
      `${k.name} ${k.disabled ? 'enabled' : 'disabled'}`,
    );
  const setLimit = () =>
    p.act(
      () =>
        api('PATCH', `keys/${k.hash}`, {
          limit: limit.value === '' ? null : Number(limit.value),
          limit_reset: reset.value || null,
        }),
      `Limit of ${k.name} saved`,
    );
  return h(
    'div',
    { class: 'inline' },
    h('button', { 'data-toggle-key': k.label, onclick: () => void toggle() }, k.disabled ? 'Enable' : 'Disable'),
    limit,
    reset,
    deleteButton(p, k),
    h('button', { onclick: () => void setLimit() }, 'Set limit'),
  );
}

/** Delete takes two clicks: the first asks, the second deletes (the key stops working at once). */
function deleteButton(p: KeysPage, k: Key): HTMLElement {
  const b = h('button', { 'data-delete-key': k.label, class: 'danger' }, 'Delete');
  b.addEventListener('click', () => {
    if (b.dataset.armed !== 'yes') {
      b.dataset.armed = 'yes';
      b.textContent = 'Delete for good?';
      return;
    }
    void p.act(() => api('DELETE', `keys/${k.hash}`), `${k.name} deleted: it no longer works`);
  });
  return b;
}

export function newAccountForm(p: KeysPage): HTMLElement {
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
  const submit = (e: Event) => {
    e.preventDefault();
    void p.act(
      () => api('POST', 'accounts', { name: name.value, credits: Number(cr.value || 0) }),
      `Account ${name.value} created`,
    );
  };
  return h(
    'form',
    { class: 'inline create', onsubmit: submit },
    h('strong', {}, 'New account'),
    name,
    cr,
    h('button', { id: 'new-account-submit', type: 'submit', class: 'primary' }, 'Create account'),
  );
}

/** A new key of one of the accounts listed (the filtered one first); its raw value is shown once. */
export function newKeyForm(p: KeysPage, accounts: Account[]): HTMLElement {
  const chosen = p.state.filter;
  const listed =
    accounts.some((a) => a.id === chosen) || !chosen
      ? accounts
      : [{ id: chosen, name: p.state.names.get(chosen) ?? chosen }, ...accounts];
  const account = h(
    'select',
    { id: 'key-account', 'aria-label': 'account' },
    ...listed.map((a) => h('option', { value: a.id, selected: a.id === chosen }, a.name)),
  );
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
    ...RESETS.map(([v, t]) => h('option', { value: v }, t)),
  );
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await api<{ key: string; data: Key }>('POST', 'keys', {
        account_id: account.value,
        name: name.value,
        limit: limit.value === '' ? null : Number(limit.value),
        limit_reset: reset.value || null,
      });
      await p.reload();
      clear(
        p.status,
        h(
          'div',
          { class: 'notice warn once', id: 'new-key' },
          h('strong', {}, `Key "${r.data.name}" created. It is shown once: copy it now.`),
          h('code', { id: 'new-key-value' }, r.key),
        ),
      );
    } catch (err) {
      p.say(err instanceof Error ? err.message : String(err));
    }
  };
  return h(
    'form',
    { class: 'inline create', onsubmit: (e: Event) => void submit(e) },
    h('strong', {}, 'New key'),
    account,
    name,
    limit,
    reset,
    h('button', { id: 'new-key-submit', type: 'submit', class: 'primary' }, 'Create key'),
  );
}
