/**
 * The response cache (the cache plugin's `cache` section): purge by model, key, account or everything, each purge
 * confirmed in words before it runs; and whether a key or an account uses the cache.
 */
import { api, atLeast, type Me } from '../api';
import { clear, h, int, notice } from '../dom';
import { confirmButton, field, section } from './sections';

interface Named {
  id: string;
  label: string;
}

function options(id: string, empty: string, items: Named[]): HTMLSelectElement {
  return h(
    'select',
    { id },
    h('option', { value: '' }, empty),
    ...items.map((i) => h('option', { value: i.id }, i.label)),
  );
}

async function subjects(): Promise<{ keys: Named[]; accounts: Named[]; models: string[] }> {
  const keys = (await api<{ data: Array<{ hash: string; name: string; label: string }> }>('GET', 'keys?limit=200'))
    .data;
  const accounts = (await api<{ data: Array<{ id: string; name: string }> }>('GET', 'accounts')).data;
  const models = (await api<{ data: Array<{ id: string }> }>('GET', 'models')).data.map((m) => m.id);
  return {
    keys: keys.map((k) => ({ id: k.hash, label: `${k.name} (${k.label.slice(-4)})` })),
    accounts: accounts.map((a) => ({ id: a.id, label: a.name })),
    models,
  };
}

/** The purge form: what it will delete is said on the button before the second click. */
function purgeCard(s: Awaited<ReturnType<typeof subjects>>, out: HTMLElement): HTMLElement {
  const model = options(
    'purge-model',
    'any model',
    s.models.map((m) => ({ id: m, label: m })),
  );
  const key = options('purge-key', 'any key', s.keys);
  const account = options('purge-account', 'any account', s.accounts);
  const all = h('input', { id: 'purge-all', type: 'checkbox' });
  const body = () => ({
    model: model.value || undefined,
    key_hash: key.value || undefined,
    account_id: account.value || undefined,
    all: all.checked || undefined,
  });
  const what = () => {
    const b = body();
    const parts = [
      b.model && `of model ${b.model}`,
      b.key_hash && `stored for key ${key.selectedOptions[0]?.text}`,
      b.account_id && `of account ${account.selectedOptions[0]?.text}`,
    ].filter(Boolean);
    if (parts.length) return `Delete the entries ${parts.join(', ')}?`;
    return b.all ? 'Delete EVERY cache entry?' : 'Choose what to purge first';
  };
  const run = () =>
    void section
      .action<{ deleted: number }>('cache', 'purge', body())
      .then((r) => clear(out, notice(`Purged: ${int(r.deleted)} entries deleted`, 'ok')))
      .catch((e: unknown) => clear(out, notice(e instanceof Error ? e.message : String(e))));
  return h(
    'section',
    { class: 'card stack', id: 'purge-card' },
    h('h2', {}, 'Purge'),
    h('p', { class: 'muted' }, 'Deletes the entries matching every choice; "every entry" alone empties the cache.'),
    h('div', { class: 'inline' }, model, key, account, h('label', {}, all, ' every entry')),
    h('div', { class: 'inline' }, confirmButton({ id: 'purge-submit' }, 'Purge', what, run)),
  );
}

const STATES: Array<[string, string]> = [
  ['', 'the default (the cache config)'],
  ['true', 'uses the cache'],
  ['false', 'does not use the cache'],
];

/** A key's or an account's own setting: read when chosen, saved by an operator. */
function settingCard(s: Awaited<ReturnType<typeof subjects>>, me: Me, out: HTMLElement): HTMLElement {
  const who = h(
    'select',
    { id: 'cache-subject' },
    h('option', { value: '' }, 'choose a key or an account'),
    ...s.keys.map((k) => h('option', { value: `key:${k.id}` }, `key ${k.label}`)),
    ...s.accounts.map((a) => h('option', { value: `account:${a.id}` }, `account ${a.label}`)),
  );
  const state = h(
    'select',
    { id: 'cache-enabled', disabled: true },
    ...STATES.map(([v, t]) => h('option', { value: v }, t)),
  );
  const save = h('button', { id: 'cache-save', class: 'primary', disabled: true, type: 'submit' }, 'Save');
  const target = () => who.value.split(':') as [string, string];
  who.addEventListener('change', async () => {
    const [subject, id] = target();
    state.disabled = save.disabled = true;
    if (!id) return;
    const v = await section.read<{ enabled: boolean | null }>('cache', subject, id);
    state.value = v.enabled === null ? '' : String(v.enabled);
    state.disabled = save.disabled = !atLeast(me, 'operator');
  });
  return h(
    'form',
    {
      class: 'card stack',
      id: 'cache-setting',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const [subject, id] = target();
        try {
          await section.write('cache', subject, id, { enabled: state.value === '' ? null : state.value === 'true' });
          clear(
            out,
            notice(`Saved: ${who.selectedOptions[0]?.text} ${STATES.find(([v]) => v === state.value)?.[1]}`, 'ok'),
          );
        } catch (err) {
          clear(out, notice(err instanceof Error ? err.message : String(err)));
        }
      },
    },
    h('h2', {}, 'Who uses the cache'),
    field('Key or account', who),
    field('Setting', state, "A key's own setting wins over its account's"),
    h('div', { class: 'inline' }, save),
  );
}

export async function cachePage(main: HTMLElement, me: Me): Promise<void> {
  const out = h('div', { id: 'cache-notice' });
  const s = await subjects();
  main.append(h('header', { class: 'page-head' }, h('h1', {}, 'Response cache')), out);
  if (atLeast(me, 'operator')) main.append(purgeCard(s, out));
  main.append(settingCard(s, me, out));
}
