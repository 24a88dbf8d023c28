/**
 * Presets (the routing plugin's `presets` section): the list, one preset's fields, and for an operator a form that
 * creates or changes a stored preset, and a Delete that asks first. gateway.yaml's presets are shown read-only.
 */
import { atLeast, type Me } from '../api';
import { clear, h, notice } from '../dom';
import { providerFacts, providerFieldset, providerList, readProvider, type ProviderPrefs } from './preset-provider';
import { confirmButton, field, jsonOf, listOf, section } from './sections';

interface Preset {
  name: string;
  model?: string;
  models?: string[];
  provider?: ProviderPrefs;
  params?: Record<string, unknown>;
  system?: string;
  source: 'config' | 'store';
}

const short = (s: string, n = 60) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The form's inputs, filled from `p` when editing. */
function presetForm(p?: Preset) {
  return {
    name: h('input', { id: 'preset-name', value: p?.name ?? '', required: true, placeholder: 'e.g. support-bot' }),
    model: h('input', { id: 'preset-model', value: p?.model ?? '', placeholder: 'openai/gpt-4o-mini' }),
    models: h('input', { id: 'preset-models', value: p?.models?.join(', ') ?? '' }),
    provider: providerFieldset(p?.provider),
    params: h('textarea', { id: 'preset-params', rows: 2 }, p?.params ? JSON.stringify(p.params) : ''),
    system: h('textarea', { id: 'preset-system', rows: 3 }, p?.system ?? ''),
  };
}
type Form = ReturnType<typeof presetForm>;

/** The body of PUT: the fields filled in, checked here so that a mistake is named before anything is sent. */
function bodyOf(f: Form): Record<string, unknown> {
  const params = jsonOf(f.params.value, 'Default parameters');
  // Any request parameter, nested ones too (response_format, tools): JSON is their own notation, so a JSON editor.
  if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params)))
    throw new Error('Default parameters: an object of request parameters, e.g. {"temperature": 0.2}');
  return {
    model: f.model.value.trim() || undefined,
    models: listOf(f.models.value),
    provider: readProvider(f.provider.controls),
    params,
    system: f.system.value || undefined,
  };
}

function editor(p: Preset | undefined, out: HTMLElement, reload: (msg: string) => Promise<void>): HTMLElement {
  const f = presetForm(p);
  if (p) f.name.setAttribute('readonly', '');
  return h(
    'form',
    {
      id: 'preset-form',
      class: 'card stack',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const name = f.name.value.trim();
        try {
          await section.write('presets', 'item', name, bodyOf(f));
          await reload(`Preset ${name} saved: requests naming @preset/${name} use it now`);
        } catch (err) {
          clear(out, notice(err instanceof Error ? err.message : String(err)));
        }
      },
    },
    h('h2', {}, p ? `Edit ${p.name}` : 'New preset'),
    field('Name', f.name, 'Requests use it as model: "@preset/<name>"'),
    field('Model', f.model, 'A model id, or give Models'),
    field('Models', f.models, 'Model ids in fallback order, separated by commas'),
    f.provider.el,
    field('Default parameters (JSON)', f.params, 'e.g. {"temperature": 0.2}; the request’s own win'),
    field('System prompt', f.system, 'Put first when the request has none'),
    h('div', { class: 'inline' }, h('button', { id: 'preset-save', type: 'submit', class: 'primary' }, 'Save')),
  );
}

/** Parameters for people: `temperature 0.2, max_tokens 300` (a nested value as its JSON). */
function paramsText(params: Record<string, unknown>): string {
  return Object.entries(params)
    .map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(', ');
}

/** A preset read-only (gateway.yaml's, or for a viewer): its fields as a labelled list. */
function view(p: Preset): HTMLElement {
  const facts: Array<[string, string | undefined]> = [
    ['Name', p.name],
    ['Source', p.source === 'config' ? 'gateway.yaml (read-only: change it there)' : 'stored'],
    ['Model', p.model],
    ['Models', p.models?.join(' → ')],
    ['Default parameters', p.params && paramsText(p.params)],
    ['System prompt', p.system],
  ];
  return h(
    'section',
    { id: 'preset-view', class: 'card' },
    h('h2', {}, p.name),
    h('dl', { class: 'facts' }, ...facts.filter(([, v]) => v).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('h3', {}, 'Provider preferences'),
    providerList(p.provider, 'preset-view-provider'),
  );
}

/** One preset as a card: its name (opens it), model, source and Delete on one line, what it sets below. */
function card(p: Preset, me: Me, edit: (p: Preset) => void, remove: (p: Preset) => void): HTMLElement {
  const writable = atLeast(me, 'operator') && p.source === 'store';
  const sets = [
    ...providerFacts(p.provider).map(([k, v]) => `${k}: ${v}`),
    p.params && `parameters ${paramsText(p.params)}`,
    p.system && `system: ${p.system}`,
  ]
    .filter(Boolean)
    .join(' · ');
  return h(
    'li',
    { class: 'item' },
    h(
      'div',
      { class: 'inline' },
      h(
        'a',
        { href: '#/presets', 'data-preset': p.name, onclick: (e: Event) => (e.preventDefault(), edit(p)) },
        p.name,
      ),
      h('span', {}, p.model ?? p.models?.join(' → ') ?? '—'),
      h(
        'span',
        { class: `badge ${p.source === 'store' ? 'on' : ''}` },
        p.source === 'config' ? 'gateway.yaml' : 'stored',
      ),
      h('span', { class: 'spacer' }),
      writable
        ? confirmButton(
            { 'data-delete-preset': p.name },
            'Delete',
            () => `Delete ${p.name} for good?`,
            () => remove(p),
          )
        : null,
    ),
    sets ? h('p', { class: 'muted' }, short(sets, 160)) : null,
  );
}

export async function presetsPage(main: HTMLElement, me: Me): Promise<void> {
  const out = h('div', { id: 'presets-notice' });
  const list = h('section', { class: 'card' });
  const form = h('div');
  const edit = (p?: Preset) => {
    // gateway.yaml's presets and a viewer's session: the fields, read-only.
    if (!atLeast(me, 'operator') || p?.source === 'config') clear(form, p ? view(p) : null);
    else clear(form, editor(p, out, reload));
    form.scrollIntoView({ block: 'nearest' });
  };
  const remove = (p: Preset) =>
    void section
      .remove('presets', p.name)
      .then(() => reload(`Preset ${p.name} deleted`))
      .catch((err: unknown) => clear(out, notice(err instanceof Error ? err.message : String(err))));
  async function reload(message?: string): Promise<void> {
    const presets = (await section.items<Preset>('presets')).map((i) => i.value);
    clear(
      list,
      h('h2', {}, 'Presets'),
      presets.length
        ? h('ul', { id: 'presets-list', class: 'items' }, ...presets.map((p) => card(p, me, edit, remove)))
        : h('p', { class: 'empty', id: 'presets-empty' }, 'No presets yet.'),
    );
    clear(out, message ? notice(message, 'ok') : null);
    if (message) clear(form);
  }
  main.append(
    h(
      'header',
      { class: 'page-head' },
      h('h1', {}, 'Presets'),
      h('span', { class: 'spacer' }),
      atLeast(me, 'operator') ? h('button', { id: 'preset-new', onclick: () => edit() }, 'New preset') : null,
    ),
    out,
    list,
    form,
  );
  await reload();
}
