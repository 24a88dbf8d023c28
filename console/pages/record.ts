/**
 * A generation record as a person reads it, in a dialog above the page (the top layer: never under the sticky nav)
 * that scrolls on its own and takes the whole screen on a phone: what was asked and answered, usage and cost, timing,
 * each attempt and the fallback path, what the guards and the cache did, and the raw JSON behind a toggle.
 */
import { api, ApiError } from '../api';
import { clear, h, int, money, ms, notice, when } from '../dom';
import { conversation } from './record-items';
import { settingsLinkTo } from './links';

interface Attempt {
  provider: string;
  deployment: string;
  model: string;
  status: 'ok' | 'error' | 'skipped';
  code?: string;
  guard?: string;
}
interface Guard {
  rule: string;
  side: string;
  action: string;
  count: number;
}
export interface RecordData {
  id: string;
  created_at: string;
  model: string;
  provider: string | null;
  deployment: string | null;
  account_id: string;
  api_key_hash: string | null;
  tokens_prompt: number;
  tokens_completion: number;
  tokens_cached: number;
  tokens_cache_write: number;
  tokens_reasoning: number;
  total_cost: number;
  latency_ms: number | null;
  time_to_first_token_ms: number | null;
  finish_reason: string | null;
  streamed: boolean;
  cancelled: boolean;
  status: string;
  error_code: string | null;
  app: { referer: string | null; title: string | null };
  user: string | null;
  variant: string | null;
  insured: boolean;
  attempts: Attempt[] | null;
  cache?: 'hit' | 'miss' | 'bypass';
  cache_entry?: string | null;
  cache_similarity?: number | null;
  guardrails?: Guard[];
  /** The stored response (the storage plugin), with the request's input items when it kept them. */
  response: Record<string, unknown> | null;
}

/** What an error code means, in words; the code itself is shown beside it. */
const ERROR_WORDS: Record<string, string> = {
  upstream_timeout: 'The provider did not answer in time.',
  upstream_unreachable: 'The provider could not be reached.',
  upstream_rate_limited: 'The provider refused the request: too many requests.',
  upstream_auth_failed: "The provider refused the gateway's credentials.",
  upstream_bad_request: 'The provider refused the request as malformed.',
  upstream_not_found: 'The provider does not know the model.',
  upstream_bad_response: 'The provider answered something that is not a valid completion.',
  upstream_closed: 'The provider closed the connection before the answer ended.',
  upstream_stream_error: 'The stream broke while the answer was coming.',
  upstream_error: 'The provider answered with an error.',
  no_deployment: 'No deployment of the model could take the request.',
  guardrail_blocked: 'A guardrail blocked the request.',
};

export function errorSentence(code: string): string {
  return ERROR_WORDS[code] ?? (/timeout/.test(code) ? 'A time limit ran out.' : 'The request failed.');
}

/** A two-column list of facts; rows whose value is null are left out. */
function facts(id: string, rows: Array<[string, string | Node | null]>): HTMLElement {
  const dl = h('dl', { class: 'facts', id });
  for (const [k, v] of rows) if (v !== null) dl.append(h('dt', {}, k), h('dd', {}, v));
  return dl;
}

function section(title: string, ...body: Array<Node | null>): HTMLElement {
  return h('section', { class: 'record-part' }, h('h3', {}, title), ...body);
}

const sentence = (text: string, id?: string) => h('p', { class: 'muted', id }, text);

function summaryPart(r: RecordData, keyName: (hash: string) => string): HTMLElement {
  const failed = r.error_code
    ? h('span', { class: 'error-text' }, `${errorSentence(r.error_code)} `, h('code', {}, r.error_code))
    : null;
  return facts('record-summary', [
    ['Time (UTC)', when(r.created_at)],
    ['Model', r.model + (r.variant ? ` (${r.variant})` : '')],
    [r.error_code ? 'Last tried' : 'Served by', r.deployment ?? r.provider ?? 'no provider (refused before any call)'],
    ['Status', h('span', { class: `badge ${r.error_code ? 'off' : 'on'}` }, r.status)],
    ['Error', failed],
    ['Finish reason', r.finish_reason],
    ['Delivery', `${r.streamed ? 'streamed' : 'whole'}${r.cancelled ? ', cancelled by the client' : ''}`],
    ['Key', r.api_key_hash ? settingsLinkTo('key', r.api_key_hash, keyName(r.api_key_hash)) : null],
    ['Account', settingsLinkTo('account', r.account_id, r.account_id)],
    ['App', r.app.title ?? r.app.referer],
    ['End user', r.user],
  ]);
}

function usagePart(r: RecordData): HTMLElement {
  return section(
    'Usage and timing',
    facts('record-usage', [
      ['Prompt tokens', int(r.tokens_prompt)],
      ['Completion tokens', int(r.tokens_completion)],
      ['Cached prompt tokens', int(r.tokens_cached)],
      ['Cache write tokens', r.tokens_cache_write ? int(r.tokens_cache_write) : null],
      ['Reasoning tokens', int(r.tokens_reasoning)],
      ['Cost', money(r.total_cost) + (r.insured ? ' (insured: nothing charged)' : '')],
      ['Latency', ms(r.latency_ms)],
      ['Time to first token', ms(r.time_to_first_token_ms)],
    ]),
  );
}

function attemptsPart(r: RecordData): HTMLElement {
  const list = r.attempts;
  if (!list || list.length === 0)
    return section(
      'Attempts',
      sentence(
        r.provider
          ? `One attempt: ${r.deployment ?? r.provider} answered.`
          : 'No attempt was made: the gateway answered the request itself.',
        'record-attempts',
      ),
    );
  const path = list.map((a) => a.deployment).join(' → ');
  const rows = list.map((a, i) =>
    h(
      'li',
      { class: `attempt ${a.status}` },
      h('strong', {}, `${i + 1}. ${a.deployment}`),
      ` (${a.model}): `,
      h('span', { class: `badge ${a.status === 'ok' ? 'on' : 'off'}` }, a.status === 'ok' ? 'answered' : a.status),
      a.code ? ` ${errorSentence(a.code)} ` : '',
      a.code ? h('code', {}, a.code) : '',
      a.guard ? ` Refused by the ${a.guard} guard.` : '',
    ),
  );
  return section(
    'Attempts',
    list.length > 1 ? h('p', { class: 'path' }, `Fallback path: ${path}`) : null,
    h('ul', { id: 'record-attempts', class: 'attempts' }, ...rows),
  );
}

function guardsPart(r: RecordData): HTMLElement {
  const g = r.guardrails ?? [];
  if (g.length === 0) return section('Guardrails', sentence('No guardrail acted on this request.', 'record-guards'));
  const verb = (a: string) => (a === 'redact' ? 'redacted' : a === 'block' ? 'blocked' : a);
  return section(
    'Guardrails',
    h(
      'ul',
      { id: 'record-guards' },
      ...g.map((x) =>
        h(
          'li',
          {},
          h('strong', {}, x.rule),
          ` ${verb(x.action)} ${x.count} match${x.count === 1 ? '' : 'es'} in the ${x.side === 'output' ? 'answer' : 'request'}`,
        ),
      ),
    ),
  );
}

function cachePart(r: RecordData): HTMLElement {
  const text = !r.cache
    ? 'The response cache is not in the chain.'
    : r.cache === 'hit'
      ? `Served from the cache (entry ${r.cache_entry?.slice(0, 12) ?? '—'}${
          r.cache_similarity !== null && r.cache_similarity !== undefined
            ? `, similarity ${r.cache_similarity.toFixed(3)}`
            : ''
        }): no provider was called.`
      : r.cache === 'miss'
        ? 'Looked up in the cache, not found: the answer was stored for next time.'
        : 'The cache was bypassed (the model, the key, the request or its Cache-Control said so).';
  return section('Cache', h('p', { id: 'record-cache', class: `cache-${r.cache ?? 'none'}` }, text));
}

/**
 * A later model round of a /v1/responses request (remote MCP tools: `<id>_r<n>`) has no stored response of its own:
 * the response, with every round's calls, is kept under the first round's id, which this opens.
 */
function roundOf(r: RecordData, keyName: (hash: string) => string): HTMLElement | null {
  const m = /^(.+)_r(\d+)$/.exec(r.id);
  if (!m) return null;
  const [, first, n] = m;
  return section(
    'Request and answer',
    h(
      'p',
      { class: 'muted', id: 'record-no-response' },
      `Model round ${Number(n) + 1} of response `,
      h(
        'a',
        {
          href: '#/activity',
          id: 'record-first-round',
          onclick: (e: Event) => (e.preventDefault(), void showRecord(first, keyName)),
        },
        first,
      ),
      ': the request, the tool calls and the answer are kept with it.',
    ),
  );
}

function conversationParts(r: RecordData, keyName: (hash: string) => string): HTMLElement[] {
  const body = r.response;
  const round = body ? null : roundOf(r, keyName);
  if (round) return [round];
  if (!body)
    return [
      section(
        'Request and answer',
        sentence(
          r.error_code
            ? 'Not stored: the request failed, so there was no answer to keep.'
            : 'Not stored: the storage plugin is off, the request asked store: false, the model is excluded, ' +
                'or the stored response expired.',
          'record-no-response',
        ),
      ),
    ];
  // A /v1/responses request keeps its input items, a chat completion its messages.
  const input = [body.input_items, body.request_messages].find(Array.isArray) as unknown[] | undefined;
  const output = Array.isArray(body.output) ? body.output : [];
  return [
    section(
      'Request',
      input && input.length > 0
        ? conversation(input, 'record-messages')
        : sentence(
            "The request's messages were not stored (a response stored before the gateway kept them).",
            'record-messages',
          ),
    ),
    section(
      'Answer',
      body.content_stored === false
        ? sentence('Stored without content (the model is set to keep no content).', 'record-answer')
        : output.length > 0
          ? conversation(output, 'record-answer')
          : sentence('The answer was empty.', 'record-answer'),
      r.finish_reason ? h('p', { class: 'muted' }, `Finish reason: ${r.finish_reason}`) : null,
    ),
  ];
}

/** The raw record behind a toggle: the JSON the API answered, for copying. */
function rawPart(r: RecordData): HTMLElement {
  const { response, ...record } = r;
  const pre = h('pre', { id: 'record-json', class: 'hidden' }, JSON.stringify({ ...record, response }, null, 2));
  const toggle = h(
    'button',
    {
      id: 'record-raw-toggle',
      'aria-expanded': 'false',
      onclick: () => {
        const open = pre.classList.toggle('hidden') === false;
        toggle.setAttribute('aria-expanded', String(open));
        toggle.textContent = open ? 'Hide raw JSON' : 'Show raw JSON';
      },
    },
    'Show raw JSON',
  );
  return section('Raw', toggle, pre);
}

/** The one dialog the records open in (made on first use, kept in the body). */
function recordDialog(): HTMLDialogElement {
  const found = document.getElementById('record-detail');
  if (found instanceof HTMLDialogElement) return found;
  const d = h('dialog', { id: 'record-detail', class: 'record', 'aria-labelledby': 'record-title' });
  // A click on the backdrop (outside the box) closes it, as Escape does.
  d.addEventListener('click', (e) => {
    if (e.target === d) d.close();
  });
  document.body.append(d);
  return d;
}

function head(id: string, d: HTMLDialogElement): HTMLElement {
  return h(
    'header',
    { class: 'record-head' },
    h('h2', { id: 'record-title' }, 'Request ', h('code', {}, id)),
    h('span', { class: 'spacer' }),
    h('button', { id: 'record-close', onclick: () => d.close() }, 'Close'),
  );
}

/** Open record `id` in the dialog; a failure to load it is a sentence in the dialog, never a blank one. */
export async function showRecord(id: string, keyName: (hash: string) => string): Promise<void> {
  const d = recordDialog();
  const body = h('div', { class: 'record-body' }, sentence('Loading…'));
  clear(d, head(id, d), body);
  if (!d.open) d.showModal();
  try {
    const r = (await api<{ data: RecordData }>('GET', `records/${encodeURIComponent(id)}`)).data;
    clear(
      body,
      summaryPart(r, keyName),
      ...conversationParts(r, keyName),
      usagePart(r),
      attemptsPart(r),
      guardsPart(r),
      cachePart(r),
      rawPart(r),
    );
  } catch (e) {
    clear(body, notice(e instanceof ApiError || e instanceof Error ? e.message : String(e)));
  }
  body.scrollTop = 0;
}
