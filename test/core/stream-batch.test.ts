import { expect } from 'chai';
import { createHook } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import { sseData, startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { MockUpstream, openaiFixtures } from '../helpers/mock-upstream';

/**
 * The chunks of one upstream read reach the client without a promise each (ChunkSource.poll): a long stream whose
 * upstream sends everything at once makes far fewer promises than it has chunks, on the same wire and translated.
 */
const CHUNKS = 2000;

/** A promise made on the stream's way: by the writer or by routing's chunk sources (not the test's client, not tsx). */
const STREAM_PATH = /[/\\](src[/\\]stream|plugins[/\\]routing)[/\\]/;

function openai(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let body = `data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: '' }))}\n\n`;
  for (let i = 0; i < CHUNKS; i++) body += `data: ${JSON.stringify(openaiFixtures.chunk({ content: ` w${i}` }))}\n\n`;
  body += `data: ${JSON.stringify(openaiFixtures.chunk({}, 'stop'))}\n\n`;
  res.end(`${body}data: [DONE]\n\n`);
}

function anthropic(res: ServerResponse): void {
  const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let body = ev('message_start', {
    message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 3 } },
  });
  body += ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  for (let i = 0; i < CHUNKS; i++)
    body += ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ` w${i}` } });
  body += ev('content_block_stop', { index: 0 });
  body += ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: CHUNKS } });
  res.end(body + ev('message_stop', {}));
}

describe('a long stream read in few upstream reads', function () {
  this.timeout(30_000);
  let up: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    up = await new MockUpstream().start();
    gw = await startTestGateway(
      testConfig({
        providers: [
          { name: 'up', type: 'openai', api_base: `${up.url}/v1` },
          { name: 'an', type: 'anthropic', api_base: up.url, api_key: 'k' },
        ],
        models: [
          { id: 'up/m', deployments: [{ provider: 'up', model: 'm' }] },
          { id: 'an/m', deployments: [{ provider: 'an', model: 'm' }] },
        ],
        plugins: ['routing'],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  for (const [model, answer] of [
    ['up/m', openai],
    ['an/m', anthropic],
  ] as const)
    it(`costs far fewer promises than chunks (${model})`, async () => {
      up.handler = (_req, res) => answer(res);
      let promises = 0;
      const hook = createHook({
        init: (_id, type) => {
          if (type === 'PROMISE' && STREAM_PATH.test(new Error().stack ?? '')) promises++;
        },
      });
      hook.enable();
      let text: string;
      try {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        });
        text = await res.text();
      } finally {
        hook.disable();
      }
      const frames = sseData(text);
      const content = frames
        .slice(0, -1)
        .map((f) => (JSON.parse(f) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content)
        .join('');
      expect(content === Array.from({ length: CHUNKS }, (_, i) => ` w${i}`).join(''), 'the content, in order').to.equal(
        true,
      );
      expect(frames.at(-1)).to.equal('[DONE]');
      // A few per upstream read, not one (or three) per chunk.
      expect(promises).to.be.below(CHUNKS / 10);
    });
});
