import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { MOCK_MODEL, postJson, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../../helpers/accounts';
import { MockUpstream, sendJson } from '../../helpers/mock-upstream';
import { within } from '../../helpers/poll';
import { SHOTS, WIDTHS } from '../../helpers/screens';

const EMAIL = 'carol@example.net';
/** A 1x1 PNG as a data URL: the view shows its type and size, never the pixels. */
const PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/**
 * The readable record view (issue 49) in Debian's Chromium, at phone and desktop widths, over records made by real
 * requests: a /v1/responses conversation with an image, a tool call and its result; a fallback from a failing
 * deployment; a guardrail redaction; a cache hit; a request not stored. Each opens in a dialog above the sticky nav.
 */
describe('operator console (browser): the readable record view', function () {
  this.timeout(180_000);
  let down: MockUpstream;
  let gw: TestGateway;
  let browser: Browser;
  let key: string;
  const ids: Record<string, string> = {};

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    down = await new MockUpstream().start();
    down.handler = (_r, res) => sendJson(res, 503, { error: { message: 'overloaded' } });
    gw = await startTestGateway(
      testConfig(
        {
          providers: [
            { name: 'mock', type: 'mock' },
            { name: 'down', type: 'openai', api_base: `${down.url}/v1`, api_key: 'k' },
          ],
          models: [
            MOCK_MODEL,
            { id: 'down/only', pricing: MOCK_MODEL.pricing, deployments: [{ provider: 'down', model: 'm' }] },
            {
              id: 'down/flaky',
              pricing: MOCK_MODEL.pricing,
              routing: { fallbacks: ['mock/gpt-4o-mini'] },
              deployments: [{ provider: 'down', model: 'm' }],
            },
          ],
          plugins: [
            'auth',
            { console: { credit_unit: 'USD' } },
            'params',
            { fallback: { num_retries: 0, backoff_base_ms: 1, backoff_max_ms: 2 } },
            'credit',
            {
              guardrails: {
                policies: { pii: { checks: [{ detector: 'email', on: 'both', action: 'redact' }] } },
                default_policy: 'pii',
              },
            },
            'storage',
            { cache: { models: ['mock/*'] } },
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    key = (await makeAccountKey(gw, { credits: 5 })).key;
    browser = await launchChromium();
    await makeRecords();
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await down?.stop();
  });

  const call = async (path: string, body: Record<string, unknown>) => {
    const res = await postJson(`${gw.url}${path}`, body, { authorization: `Bearer ${key}` });
    expect(res.status, await res.clone().text()).to.equal(200);
    return (await res.json()) as { id: string; output?: Array<Record<string, unknown>> };
  };
  const chat = (body: Record<string, unknown>) => call('/v1/chat/completions', { model: 'mock/gpt-4o-mini', ...body });

  async function makeRecords(): Promise<void> {
    const input = [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is the weather in Paris? Use get_weather.' },
          { type: 'input_image', image_url: PIXEL },
        ],
      },
    ];
    const first = await call('/v1/responses', { model: 'mock/gpt-4o-mini', input, tools: [WEATHER] });
    const fc = first.output?.find((o) => o.type === 'function_call');
    expect(fc, JSON.stringify(first.output)).to.not.equal(undefined);
    const second = await call('/v1/responses', {
      model: 'mock/gpt-4o-mini',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: fc!.call_id, output: '{"temperature_c":21}' }],
      tools: [WEATHER],
    });
    ids.tools = second.id;
    ids.chat = (
      await chat({
        messages: [
          { role: 'system', content: 'You answer about weather.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'And in Lyon? Use get_weather.' },
              { type: 'image_url', image_url: { url: PIXEL } },
              // Stored as its type and size only (plugins/storage/bounded.ts): the view still says both.
              { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${'A'.repeat(4_000_000)}` } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_Lyon1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_Lyon1', content: 'Sunny, 18 C' },
        ],
        tools: [{ type: 'function', function: { name: WEATHER.name, parameters: WEATHER.parameters } }],
      })
    ).id;
    ids.fallback = (
      await call('/v1/chat/completions', { model: 'down/flaky', messages: [{ role: 'user', content: 'hi' }] })
    ).id;
    const failed = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'down/only', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${key}` },
    );
    expect(failed.status).to.equal(502);
    ids.guard = (await chat({ messages: [{ role: 'user', content: `Write to ${EMAIL} please` }] })).id;
    const streamed = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'mock/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Stream to me' }] },
      { authorization: `Bearer ${key}` },
    );
    ids.streamed = (/"id":"(chatcmpl-[^"]+)"/.exec(await streamed.text()) ?? [])[1];
    const cached = { messages: [{ role: 'user', content: 'Cache me' }], temperature: 0 };
    await chat(cached);
    ids.hit = (await chat(cached)).id;
    ids.unstored = (await chat({ messages: [{ role: 'user', content: 'Forget me' }], store: false })).id;
    await within(5000, async () => (await gw.services.store.generations.get(ids.unstored)) !== undefined);
  }

  async function open(width: keyof typeof WIDTHS, id: string): Promise<Page> {
    const context = await browser.newContext({ viewport: WIDTHS[width] });
    const page = await context.newPage();
    await page.goto(`${gw.url}/console`);
    await page.fill('#signin-key', ADMIN_KEY);
    await page.click('#signin-submit');
    await page.waitForSelector('main');
    await page.goto(`${gw.url}/console#/activity`);
    // Scrolled down first: the dialog must still open in view, above the sticky nav.
    await page.waitForSelector(`#records-table a[data-id="${id}"]`);
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    await page.click(`#records-table a[data-id="${id}"]`);
    await page.waitForSelector('#record-summary');
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `record-${name}.png`) });
  const text = async (page: Page, sel: string) => (await page.textContent(sel)) ?? '';
  /** The dialog's close button is the topmost thing where it is drawn: nothing (the nav) covers the dialog. */
  const onTop = (page: Page) =>
    page.evaluate(`(() => {
      const b = document.getElementById('record-close').getBoundingClientRect();
      const top = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
      return top !== null && top.id === 'record-close' && b.top >= 0;
    })()`) as Promise<boolean>;
  const overflows = (page: Page) =>
    page.evaluate(`(() => { const d = document.getElementById('record-detail');
      return d.scrollWidth > d.clientWidth + 1 || d.getBoundingClientRect().right > window.innerWidth + 1; })()`) as Promise<boolean>;

  it("storage keeps a chat request's messages for the record view; GET /v1/responses/{id} never shows them", async () => {
    const stored = await fetch(`${gw.url}/v1/responses/${ids.chat}`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await stored.json()) as Record<string, unknown>;
    expect(body.id).to.equal(ids.chat);
    expect(body).to.not.have.property('request_messages');
    expect(JSON.stringify(body)).to.not.include('Sunny, 18 C');
  });

  for (const width of ['phone', 'desktop'] as const) {
    it(`${width}: a tool conversation reads as turns: the image as a placeholder with its size, the call, its result`, async () => {
      const page = await open(width, ids.tools);
      expect(await onTop(page), 'the dialog is above the nav').to.equal(true);
      expect(await overflows(page), 'nothing runs off the dialog').to.equal(false);
      const messages = await text(page, '#record-messages');
      expect(messages).to.include('What is the weather in Paris?');
      expect(messages).to.match(/\[image: image\/png, \d+ B\]/);
      expect(messages).to.not.include('iVBORw0KGgo');
      expect(messages).to.include('get_weather');
      expect(await text(page, '#record-messages .tool-args')).to.include('"city"');
      expect(messages).to.include('temperature_c');
      expect(await text(page, '#record-answer')).to.not.equal('');
      expect(await text(page, '#record-usage'))
        .to.include('Prompt tokens')
        .and.include('USD');
      expect(await page.isVisible('#record-json')).to.equal(false);
      await shot(page, `tools-${width}`);
      await page.click('#record-raw-toggle');
      expect(await page.isVisible('#record-json')).to.equal(true);
      expect(await text(page, '#record-json'))
        .to.include(ids.tools)
        .and.include('input_items');
      await page.keyboard.press('Escape');
      expect(await page.isVisible('#record-detail')).to.equal(false);
      await page.context().close();
    });

    it(`${width}: a chat completion's messages: system, user with an image, the assistant's call, the tool result`, async () => {
      const page = await open(width, ids.chat);
      const turns = await page.$$eval('#record-messages .turn .role', (els) => els.map((e) => e.textContent ?? ''));
      expect(turns).to.deep.equal(['system', 'user', 'assistant', 'tool result · call_Lyon1']);
      const messages = await text(page, '#record-messages');
      expect(messages)
        .to.include('And in Lyon?')
        .and.match(/\[image: image\/png, \d+ B\]/)
        .and.include('[image: image/jpeg, 3.0 MB]');
      expect(await text(page, '#record-messages .tool-args')).to.include('"city": "Lyon"');
      expect(messages).to.include('Sunny, 18 C');
      expect(await text(page, '#record-answer')).to.include('Mock answer');
      await shot(page, `chat-${width}`);
      await page.context().close();
    });

    it(`${width}: a fallback shows each attempt, the failing one in words, and the path`, async () => {
      const page = await open(width, ids.fallback);
      const attempts = await text(page, '#record-attempts');
      expect(attempts).to.include('1. down/m').and.include('2. mock/mock-small').and.include('answered');
      expect(attempts).to.include('The provider answered with an error. upstream_error');
      expect(await text(page, '.record-part .path')).to.include('down/m → mock/mock-small');
      expect(await onTop(page)).to.equal(true);
      await shot(page, `fallback-${width}`);
      await page.context().close();
    });

    it(`${width}: a guardrail redaction names the detector and the action, never the value`, async () => {
      const page = await open(width, ids.guard);
      expect(await text(page, '#record-guards'))
        .to.include('email')
        .and.include('redacted 1 match in the request');
      expect(await text(page, '#record-messages'))
        .to.include('Write to')
        .and.not.include(EMAIL);
      expect(await text(page, '#record-detail')).to.not.include(EMAIL);
      await shot(page, `guard-${width}`);
      await page.context().close();
    });

    it(`${width}: a cache hit says no provider was called; a request not stored says so in a sentence`, async () => {
      let page = await open(width, ids.hit);
      expect(await text(page, '#record-cache')).to.include('Served from the cache');
      await shot(page, `cache-hit-${width}`);
      await page.context().close();
      page = await open(width, ids.unstored);
      expect(await text(page, '#record-no-response')).to.include('Not stored');
      expect(await text(page, '#record-cache')).to.include('bypassed');
      await shot(page, `unstored-${width}`);
      await page.context().close();
    });
  }

  it('a failed request reads as a sentence with its code, at both widths', async () => {
    const g = (await gw.services.store.generations.list({ limit: 50 })).find((r) => r.model === 'down/only');
    expect(g?.errorCode).to.equal('upstream_error');
    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width, g!.id);
      expect(await text(page, '#record-summary')).to.include('The provider answered with an error. upstream_error');
      expect(await text(page, '#record-summary .badge')).to.equal('error');
      expect(await text(page, '#record-summary')).to.include('Last tried');
      expect(await text(page, '#record-no-response')).to.include('the request failed');
      await shot(page, `failed-${width}`);
      await page.context().close();
    }
  });

  it('a streamed request shows its time to first token and the answer assembled from the stream', async () => {
    const page = await open('desktop', ids.streamed);
    expect(await text(page, '#record-summary')).to.include('streamed');
    expect(await text(page, '#record-usage')).to.match(/Time to first token[\d.]+ ms/);
    expect(await text(page, '#record-answer')).to.include('Mock answer: Stream to me');
    await page.context().close();
  });

  it('a record that cannot be loaded is a sentence in the dialog', async () => {
    const page = await open('desktop', ids.guard);
    await page.click('#record-close');
    await page.route('**/console/api/records/**', (route) =>
      route.fulfill({ status: 502, contentType: 'text/html', body: '<h1>502 Bad Gateway</h1>' }),
    );
    await page.click(`#records-table a[data-id="${ids.guard}"]`);
    await page.waitForSelector('#record-detail .notice.error');
    expect(await text(page, '#record-detail .notice.error'))
      .to.include('HTTP 502')
      .and.not.include('Unexpected token');
    await shot(page, 'failure-desktop');
    await page.context().close();
  });
});
