import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures } from '../../helpers/mock-upstream';
import { within } from '../../helpers/poll';

/** Chunks the upstream is ready to send: ~25 MB of SSE, far more than any buffer on the way. */
const CHUNKS = 200_000;

describe('a streamed answer to a client that does not read holds the upstream back', function () {
  this.timeout(20_000);
  let up: MockUpstream;
  let gw: TestGateway;
  /** Bytes the upstream has handed to its socket so far, and whether it finished. */
  let sent = 0;
  let finished = false;

  before(async () => {
    up = await new MockUpstream().start();
    up.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const pump = () => {
        while (i < CHUNKS) {
          const frame = `data: ${JSON.stringify(openaiFixtures.chunk({ content: `word ${i++} ` }))}\n\n`;
          sent += Buffer.byteLength(frame);
          if (!res.write(frame)) return void res.once('drain', pump);
        }
        res.end('data: [DONE]\n\n');
        finished = true;
      };
      res.on('close', () => res.off('drain', pump));
      pump();
    };
    gw = await startTestGateway(
      testConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [{ id: 'm/stream', deployments: [{ provider: 'up', model: 'up-model' }] }],
        plugins: ['routing'],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  it('the upstream is paused once the buffers fill, and resumes when the client reads', async () => {
    const u = new URL(gw.url);
    const body = JSON.stringify({ model: 'm/stream', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const socket: Socket = connect({ host: u.hostname, port: Number(u.port) });
    let received = 0;
    let reading = false;
    socket.on('data', (d: Buffer) => {
      received += d.length;
      if (!reading && received > 64 * 1024) socket.pause(); // then read nothing more, until told to
    });
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    try {
      // The upstream sends until every buffer between it and the stopped client is full...
      expect(await within(5000, () => sent > 1024 * 1024)).to.equal(true);
      let before = -1;
      expect(
        await within(
          5000,
          () => {
            const still = sent === before;
            before = sent;
            return still;
          },
          300,
        ),
      ).to.equal(true);
      // ...which is far from all of it: the gateway does not read the upstream ahead of its client.
      expect(finished).to.equal(false);
      expect(sent).to.be.below(12 * 1024 * 1024);
      // The client reads again: the rest flows, to the end.
      reading = true;
      socket.resume();
      expect(await within(10_000, () => finished)).to.equal(true);
    } finally {
      socket.destroy();
    }
  });
});
