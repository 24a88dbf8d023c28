import { expect } from 'chai';
import { request } from 'node:http';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';

interface Outcome {
  kind: 'reset' | 'done' | 'error-event' | 'status';
  status: number;
  code?: string;
  retryAfter?: string;
}

/** One chat request over its own connection; a reset (socket error, truncated body) is an outcome, not an exception. */
function chat(url: string, stream: boolean): Promise<Outcome> {
  const body = JSON.stringify({ model: 'm/slow', stream, messages: [{ role: 'user', content: 'hi' }] });
  return new Promise((resolve) => {
    const u = new URL(`${url}/v1/chat/completions`);
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('error', () => resolve({ kind: 'reset', status: res.statusCode ?? 0 }));
        res.on('aborted', () => resolve({ kind: 'reset', status: res.statusCode ?? 0 }));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (!res.complete) return resolve({ kind: 'reset', status });
          if (stream && status === 200) {
            if (text.trimEnd().endsWith('data: [DONE]')) return resolve({ kind: 'done', status });
            const frames = text.split('\n\n').filter(Boolean);
            const last = frames[frames.length - 1] ?? '';
            const m = /^data: (\{"error".*)$/s.exec(last);
            return resolve(
              m
                ? { kind: 'error-event', status, code: (JSON.parse(m[1]) as { error: { code: string } }).error.code }
                : { kind: 'reset', status },
            );
          }
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { error?: { code: string } }).error?.code;
          } catch {
            code = undefined;
          }
          resolve({ kind: 'status', status, code, retryAfter: res.headers['retry-after'] });
        });
      },
    );
    req.on('error', () => resolve({ kind: 'reset', status: 0 }));
    req.end(body);
  });
}

describe('hostile: SIGTERM with running streams and a queue for upstream connections (issue 15, item 7)', function () {
  this.timeout(60_000);
  let up: MockUpstream;
  let gw: GatewayProcess;

  before(async () => {
    up = await new MockUpstream().start();
    // Streams: five chunks 100 ms apart. Plain answers: after 400 ms. Only 8 upstream connections: the rest queue.
    up.handler = async (r, res) => {
      if ((r.json as { stream?: boolean }).stream) {
        await writeSse(
          res,
          Array.from({ length: 5 }, (_, i) => openaiFixtures.chunk({ content: `w${i} ` })).concat([
            openaiFixtures.chunk({}, 'stop'),
          ]),
          { delayMs: 100 },
        );
      } else {
        await new Promise((r2) => setTimeout(r2, 400));
        if (!res.destroyed) sendJson(res, 200, openaiFixtures.completion('done'));
      }
    };
    gw = await startGatewayProcess({
      server: { host: '127.0.0.1', port: 0, log_level: 'info', shutdown_grace_ms: 1500 },
      store: { driver: 'memory' },
      providers: [
        { name: 'a', type: 'openai', api_base: `${up.url}/v1`, api_key: 'sk-test-upstream', max_connections: 8 },
      ],
      models: [{ id: 'm/slow', deployments: [{ provider: 'a', model: 'x' }] }],
      plugins: ['routing'],
    });
  });
  after(async () => {
    await gw?.stop('SIGKILL');
    await up.stop();
  });

  it('every client gets [DONE], an error event or a 503 shutting_down with Retry-After; none a reset', async () => {
    const all: Array<Promise<Outcome>> = [];
    for (let i = 0; i < 200; i++) all.push(chat(gw.url, i % 4 === 0));
    await new Promise((r) => setTimeout(r, 500));
    const code = await gw.stop('SIGTERM');
    const outcomes = await Promise.all(all);
    const count = (pred: (o: Outcome) => boolean) => outcomes.filter(pred).length;
    const resets = count((o) => o.kind === 'reset');
    const unavailable = outcomes.filter((o) => o.kind === 'status' && o.status === 503);
    const summary = {
      done: count((o) => o.kind === 'done'),
      errorEvents: count((o) => o.kind === 'error-event'),
      ok: count((o) => o.kind === 'status' && o.status === 200),
      unavailable: unavailable.length,
      resets,
      other: count((o) => o.kind === 'status' && o.status !== 200 && o.status !== 503),
    };
    console.log(`      ${JSON.stringify(summary)}`);
    expect(code).to.equal(0);
    expect(resets).to.equal(0);
    expect(summary.other).to.equal(0);
    expect(summary.unavailable).to.be.greaterThan(0);
    for (const o of unavailable) {
      expect(o.code).to.equal('shutting_down');
      expect(o.retryAfter).to.match(/^\d+$/);
    }
    for (const o of outcomes.filter((x) => x.kind === 'error-event')) expect(o.code).to.equal('shutting_down');
  });
});
