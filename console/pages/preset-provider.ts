/**
 * A preset's provider preferences (OpenRouter's `provider` object, docs/reference/routing-fields.md) as people read
 * and write them: a labelled list on the page, and a form of their eight fields whose mistakes are named before
 * anything is sent (the server checks again: an unknown provider is its 400, shown as it says).
 */
import { h } from '../dom';

export interface ProviderPrefs {
  order?: string[];
  only?: string[];
  ignore?: string[];
  allow_fallbacks?: boolean;
  require_parameters?: boolean;
  data_collection?: 'allow' | 'deny';
  sort?: 'price' | 'throughput' | 'latency';
  max_price?: Partial<Record<Price, number>>;
}

type Price = 'prompt' | 'completion' | 'request' | 'image';
const PRICES: Array<[Price, string]> = [
  ['prompt', 'prompt, per million tokens'],
  ['completion', 'completion, per million tokens'],
  ['request', 'per request'],
  ['image', 'per image (not used yet: no deployment has an image price)'],
];
const LISTS = [
  ['order', 'Try first, in order'],
  ['only', 'Only'],
  ['ignore', 'Never'],
] as const;
const yesNo = (b: boolean) => (b ? 'yes' : 'no');

/** The preferences as label/value pairs, in words (`allow_fallbacks: false` is "Other providers: no"). */
export function providerFacts(p: ProviderPrefs | undefined): Array<[string, string]> {
  if (!p) return [];
  const out: Array<[string, string]> = [];
  for (const [k, label] of LISTS) if (p[k]?.length) out.push([label, p[k].join(k === 'order' ? ' → ' : ', ')]);
  if (p.allow_fallbacks !== undefined) out.push(['Other providers after these', yesNo(p.allow_fallbacks)]);
  if (p.sort) out.push(['Sort by', p.sort]);
  if (p.data_collection) out.push(['Data collection', p.data_collection === 'deny' ? 'deny' : 'allow']);
  if (p.require_parameters !== undefined) out.push(['Every parameter supported', yesNo(p.require_parameters)]);
  const prices = PRICES.filter(([k]) => p.max_price?.[k] !== undefined).map(([k, t]) => `${p.max_price?.[k]} ${t}`);
  if (prices.length) out.push(['Max price', prices.join('; ')]);
  return out;
}

/** A `<dl>` of the preferences; `none` when there are none. */
export function providerList(p: ProviderPrefs | undefined, id?: string): HTMLElement {
  const facts = providerFacts(p);
  if (!facts.length) return h('span', { class: 'muted', id }, 'none: the model’s own order');
  return h('dl', { class: 'facts', id }, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function choice(id: string, label: string, opts: Array<[string, string]>, value: string): HTMLSelectElement {
  return h(
    'select',
    { id, 'aria-label': label },
    ...opts.map(([v, t]) => h('option', { value: v, selected: v === value }, t)),
  );
}

const boolText = (b: boolean | undefined) => (b === undefined ? '' : String(b));

/** The form's controls, filled from `p`. */
function controls(p: ProviderPrefs = {}) {
  const list = (k: 'order' | 'only' | 'ignore') =>
    h('input', { id: `provider-${k}`, value: p[k]?.join(', ') ?? '', placeholder: 'provider names, by commas' });
  const price = (k: Price) =>
    h('input', {
      id: `provider-max-${k}`,
      type: 'number',
      min: '0',
      step: 'any',
      value: p.max_price?.[k] ?? '',
      placeholder: 'no limit',
      'aria-label': `max price ${k}`,
    });
  return {
    order: list('order'),
    only: list('only'),
    ignore: list('ignore'),
    allow_fallbacks: choice(
      'provider-fallbacks',
      'other providers',
      [
        ['', 'yes (not set)'],
        ['true', 'yes'],
        ['false', 'no'],
      ],
      boolText(p.allow_fallbacks),
    ),
    sort: choice(
      'provider-sort',
      'sort by',
      [
        ['', "the model's strategy (not set)"],
        ['price', 'price, cheapest first'],
        ['throughput', 'throughput, fastest first'],
        ['latency', 'latency, lowest first'],
      ],
      p.sort ?? '',
    ),
    data_collection: choice(
      'provider-data',
      'data collection',
      [
        ['', 'allow (not set)'],
        ['allow', 'allow'],
        ['deny', 'deny'],
      ],
      p.data_collection ?? '',
    ),
    require_parameters: choice(
      'provider-require',
      'require parameters',
      [
        ['', 'no (not set)'],
        ['false', 'no'],
        ['true', 'yes'],
      ],
      boolText(p.require_parameters),
    ),
    max_price: Object.fromEntries(PRICES.map(([k]) => [k, price(k)])) as Record<Price, HTMLInputElement>,
  };
}
export type ProviderControls = ReturnType<typeof controls>;

const NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A list of provider names, or the sentence that names the one that cannot be a provider's name. */
function names(text: string, label: string): string[] | undefined {
  const l = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const wrong = l.find((n) => !NAME.test(n));
  if (wrong) throw new Error(`${label}: "${wrong}" is not a provider name (letters, digits, _ . - as in providers[])`);
  if (l.length > 64) throw new Error(`${label}: at most 64 providers`);
  return l.length ? l : undefined;
}

/** What the form says, as the `provider` object (undefined when nothing is set); a mistake throws its sentence. */
export function readProvider(c: ProviderControls): ProviderPrefs | undefined {
  const out: ProviderPrefs = {};
  for (const [k, label] of LISTS) {
    const v = names(c[k].value, `Providers: ${label}`);
    if (v) out[k] = v;
  }
  const max: Partial<Record<Price, number>> = {};
  for (const [k, t] of PRICES) {
    const text = c.max_price[k].value.trim();
    if (!text) continue;
    const n = Number(text);
    if (!Number.isFinite(n) || n < 0) throw new Error(`Max price ${t}: "${text}" is not a number of credits >= 0`);
    max[k] = n;
  }
  if (Object.keys(max).length) out.max_price = max;
  if (c.allow_fallbacks.value) out.allow_fallbacks = c.allow_fallbacks.value === 'true';
  if (c.require_parameters.value) out.require_parameters = c.require_parameters.value === 'true';
  if (c.sort.value) out.sort = c.sort.value as ProviderPrefs['sort'];
  if (c.data_collection.value) out.data_collection = c.data_collection.value as ProviderPrefs['data_collection'];
  return Object.keys(out).length ? out : undefined;
}

const row = (label: string, control: HTMLElement, help?: string) =>
  h('label', { class: 'field' }, h('span', {}, label), control, help ? h('small', { class: 'muted' }, help) : null);

/** The fieldset of the preset form: its controls, to be read by readProvider. */
export function providerFieldset(p?: ProviderPrefs): { el: HTMLElement; controls: ProviderControls } {
  const c = controls(p);
  const el = h(
    'fieldset',
    { class: 'provider-prefs', id: 'preset-provider' },
    h('legend', {}, 'Provider preferences'),
    h('p', { class: 'muted' }, 'Which providers serve the preset’s models, and in what order. Empty: the model’s own.'),
    h(
      'div',
      { class: 'provider-grid' },
      row('Try first, in order', c.order, 'e.g. openai, azure; the names of gateway.yaml’s providers'),
      row('Other providers after these', c.allow_fallbacks, 'no: only those tried first (or the first of the plan)'),
      row('Only these providers', c.only),
      row('Never these providers', c.ignore),
      row('Sort by', c.sort),
      row('Data collection', c.data_collection, 'deny: only providers configured data_collection: deny'),
      row('Every parameter supported', c.require_parameters, 'yes: a parameter the model lacks is a 400, not dropped'),
    ),
    h(
      'div',
      { class: 'provider-prices' },
      h('span', {}, 'Max price (credits)'),
      ...PRICES.map(([k, t]) => h('label', {}, h('small', { class: 'muted' }, t), c.max_price[k])),
    ),
  );
  return { el, controls: c };
}
