import { expect } from 'chai';
import { postJson, sseData, startTestGateway, type TestGateway } from '../../helpers/gateway';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { echoUpstream, guardConfig, policy, userText } from './helpers';

const EMAIL = 'alice.smith@example.com';
const CARD = '4111 1111 1111 1111';
const KEY = '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';
const SAID = `Mail ${EMAIL}, card ${CARD}, again ${EMAIL}; token ${KEY} end.`;

/** The text a chat stream's chunks carry, joined. */
function streamedText(body: string): string {
  return sseData(body)
    .filter((d) => d !== '[DONE]')
    .map((d) => (JSON.parse(d) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
    .join('');
}

describe('guardrails: redact, then restore the answer', function () {
  this.timeout(30000);
  let upstream: MockUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await echoUpstream(3).start();
    const guard = {
      guardrails: {
        policies: {
          pii: policy([
            ['email', 'both', 'redact'],
            ['payment_card', 'both', 'redact'],
            ['secrets', 'input', 'redact'],
          ]),
        },
        default_policy: 'pii',
      },
    };
    gw = await startTestGateway(guardConfig(upstream, [guard, 'storage', 'routing']));
  });
  after(async () => {
    await gw?.stop();
    await upstream?.stop();
  });

  it('plain: the upstream gets placeholders, the client the originals, the store the placeholders', async () => {
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/m',
      messages: [{ role: 'user', content: SAID }],
    });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { id: string; choices: Array<{ message: { content: string } }> };
    const sent = userText(upstream.requests.at(-1)!);
    expect(sent).to.equal('Mail [EMAIL_1], card [CARD_1], again [EMAIL_1]; token [SECRET_1] end.');
    for (const v of [EMAIL, CARD, KEY]) expect(upstream.requests.at(-1)!.body).not.to.include(v);
    expect(body.choices[0].message.content).to.equal(`You said: ${SAID}`);
    const stored = await (await fetch(`${gw.url}/responses/${body.id}`)).text();
    expect(stored).to.include('[EMAIL_1]').and.include('[CARD_1]');
    for (const v of [EMAIL, CARD, KEY]) expect(stored).not.to.include(v);
  });

  for (const size of [1, 2, 3, 5, 7]) {
    it(`streamed ${size} characters a chunk (placeholders split across chunks): restored, and stored redacted`, async () => {
      upstream.handler = echoUpstream(size).handler;
      const res = await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'up/m',
        stream: true,
        messages: [{ role: 'user', content: SAID }],
      });
      const text = await res.text();
      expect(streamedText(text)).to.equal(`You said: ${SAID}`);
      expect(text.endsWith('data: [DONE]\n\n')).to.equal(true);
      for (const v of [EMAIL, CARD, KEY]) expect(upstream.requests.at(-1)!.body).not.to.include(v);
      const id = (JSON.parse(sseData(text)[0]) as { id: string }).id;
      const stored = await (await fetch(`${gw.url}/responses/${id}`)).text();
      expect(stored).to.include('[EMAIL_1]');
      for (const v of [EMAIL, CARD, KEY]) expect(stored).not.to.include(v);
    });
  }

  it('/v1/responses: restored for the client; the stored response and its input items keep placeholders', async () => {
    upstream.handler = echoUpstream(3).handler;
    const res = await postJson(`${gw.url}/v1/responses`, { model: 'up/m', input: SAID });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { id: string; output: Array<{ content: Array<{ text: string }> }> };
    expect(body.output[0].content[0].text).to.equal(`You said: ${SAID}`);
    for (const v of [EMAIL, CARD, KEY]) expect(upstream.requests.at(-1)!.body).not.to.include(v);
    const stored = await (await fetch(`${gw.url}/v1/responses/${body.id}`)).text();
    expect(stored).to.include('[EMAIL_1]');
    for (const v of [EMAIL, CARD, KEY]) expect(stored).not.to.include(v);
    const items = await (await fetch(`${gw.url}/v1/responses/${body.id}/input_items`)).text();
    expect(items).to.include('[EMAIL_1]');
    for (const v of [EMAIL, CARD, KEY]) expect(items).not.to.include(v);
  });

  for (const stream of [false, true]) {
    it(`a card the answer itself holds is redacted for the client, never restored (${stream ? 'streamed' : 'plain'})`, async () => {
      upstream.handler = echoUpstream(3, 'Card 5555 5555 5555 4444 ok. ').handler;
      const res = await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'up/m',
        stream,
        messages: [{ role: 'user', content: SAID }],
      });
      const text = stream
        ? streamedText(await res.text())
        : ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content;
      expect(text).to.equal(`Card [CARD_2] ok. ${SAID}`);
      expect(text).not.to.match(/5555/);
    });
  }

  it('holds back only what may still become a match or a placeholder, not the answer', async () => {
    upstream.handler = echoUpstream(4, '').handler;
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/m',
      stream: true,
      messages: [{ role: 'user', content: `abcdefgh ${EMAIL} ijkl` }],
    });
    const pieces = sseData(await res.text())
      .filter((d) => d !== '[DONE]')
      .map((d) => (JSON.parse(d) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content)
      .filter((c): c is string => typeof c === 'string' && c.length > 0);
    // Chunks of four: "abcd" waits (a word may go on into an address), "efgh " goes with it once the word ended;
    // "[EMA" "IL_1" "] ij" wait for the placeholder and go restored with the space after it; "kl" ends the word.
    expect(pieces).to.deep.equal(['abcdefgh ', `${EMAIL} `, 'ijkl']);
  });
});
