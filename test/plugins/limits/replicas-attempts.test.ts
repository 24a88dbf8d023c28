import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { postJson } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';
import { startGatewayProcess, type GatewayProcess } from '../../helpers/process';
import { MockUpstream, openaiFixtures, sendJson, type RecordedRequest } from '../../helpers/mock-upstream';
import { OpenCounter, upstreamModel, upstreamProvider } from './helpers';

const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL || undefined;

/** The one key's limits; the model's and the key x model's requests/min (limits config). */
const KEY = { rpm: 45, tpm: 1200, concurrency: 5 };
const LIMITED_RPM = 8;
const PER_KEY_RPM = 5;
const WINDOW_MS = 60000;
/** 300 requests: 12 waves of 25 at once (more than the key's concurrency), each wave once the one before answered. */
const WAVES = 12;
const WAVE = 25;
/** What each upstream answer bills for the prompt (the gateway's bound for 'Hello there' is larger). */
const PROMPT_TOKENS = 5;

interface Sent {
  kind: string;
  wave: number;
  status: number;
  text: string;
}

/** An answer an upstream billed: which upstream, its usage's total tokens, when. */
interface Bill {
  upstream: string;
  tokens: number;
  at: number;
}

const messages = [{ role: 'user', content: 'Hello there' }];

/**
 * Each kind of request (the path, the body) and what its 200 carries. Every attempt of every kind passes the limits:
 * acc/limited has its own requests/min, acc/perkey a key x model one, acc/slow answers in 30-80 ms, acc/failing is
 * always a 500 (so each fallback is taken), and the key may not use acc/secret.
 */
const KINDS: Array<{ kind: string; path: string; body: Record<string, unknown>; ok: RegExp }> = [
  { kind: 'direct', path: 'chat', body: { model: 'acc/limited', max_tokens: 30 }, ok: /from limited/ },
  { kind: 'direct slow', path: 'chat', body: { model: 'acc/slow', max_tokens: 30 }, ok: /from slow/ },
  {
    kind: 'direct stream',
    path: 'chat',
    body: { model: 'acc/slow', max_tokens: 30, stream: true },
    ok: /"from "[\s\S]*"slow"[\s\S]*\[DONE\]/,
  },
  {
    kind: 'fallbacks',
    path: 'chat',
    body: { model: 'acc/failing', max_tokens: 30, fallbacks: ['acc/limited', 'acc/perkey', 'acc/slow'] },
    ok: /from (limited|perkey|slow)/,
  },
  {
    kind: 'fallback entries',
    path: 'chat',
    body: {
      model: 'acc/failing',
      max_tokens: 2,
      fallbacks: [
        { model: 'acc/perkey', max_tokens: 40 },
        { model: 'acc/limited', max_tokens: 20 },
        { model: 'acc/chat', max_tokens: 10 },
      ],
    },
    ok: /from (perkey|limited|chat)/,
  },
  {
    kind: 'models[]',
    path: 'chat',
    body: { model: 'acc/failing', max_tokens: 30, models: ['acc/failing', 'acc/perkey', 'acc/limited', 'acc/slow'] },
    ok: /from (perkey|limited|slow)/,
  },
  {
    kind: 'fallbacks stream',
    path: 'chat',
    body: { model: 'acc/failing', max_tokens: 30, stream: true, fallbacks: ['acc/limited', 'acc/slow'] },
    ok: /"from "[\s\S]*"(limited|slow)"[\s\S]*\[DONE\]/,
  },
  {
    kind: 'responses',
    path: 'responses',
    body: { model: 'acc/failing', input: 'Hello there', max_output_tokens: 30, fallbacks: ['acc/limited', 'acc/chat'] },
    ok: /from (limited|chat)/,
  },
  {
    kind: 'responses stream',
    path: 'responses',
    body: {
      model: 'acc/failing',
      input: 'Hello there',
      max_output_tokens: 30,
      stream: true,
      fallbacks: ['acc/perkey', 'acc/slow'],
    },
    ok: /from (perkey|slow)[\s\S]*response\.completed/,
  },
  {
    kind: 'embeddings',
    path: 'embeddings',
    body: { model: 'acc/embed', input: ['hello world', 'tokens tokens tokens'] },
    ok: /"embedding"/,
  },
  {
    kind: 'embeddings fallbacks',
    path: 'embeddings',
    body: { model: 'acc/embed-failing', input: 'hello world', fallbacks: ['acc/embed'] },
    ok: /"embedding"/,
  },
  { kind: 'not allowed', path: 'chat', body: { model: 'acc/secret', max_tokens: 30 }, ok: /^$/ },
];

/**
 * The attempt rule (issue 41) across two replicas on one PostgreSQL store and one Redis: one key's requests reach the
 * limited models by every path (direct, `fallbacks` strings and entries, `models`, /v1/responses, streams) and
 * /v1/embeddings, 300 of them over both replicas. What the upstreams themselves saw (calls, requests open at once,
 * tokens they billed) never passes the model's, the key x model's or the key's limits.
 */
describe('every attempt passes the limits across two replicas (PostgreSQL + Redis)', function () {
  this.timeout(60000);
  const procs: GatewayProcess[] = [];
  const names = ['failing', 'limited', 'perkey', 'slow', 'chat', 'embed', 'secret'] as const;
  const up = Object.fromEntries(names.map((n) => [n, new MockUpstream()])) as Record<
    (typeof names)[number],
    MockUpstream
  >;
  /** Requests open at once at all the upstreams together, and at the slow one. */
  const allOpen = new OpenCounter();
  const slowOpen = new OpenCounter();
  const bills: Bill[] = [];

  /**
   * An OpenAI-compatible upstream that bills all its attempt allows: 5 prompt tokens plus the `max_tokens` it received
   * (embeddings: a token per 4 bytes of input), plain or streamed, in `delay(n)` ms.
   */
  const answer =
    (name: string, delay: (n: number) => number, own?: OpenCounter) =>
    async (r: RecordedRequest, res: ServerResponse, n: number) => {
      allOpen.enter(res);
      own?.enter(res);
      const body = r.json as Record<string, unknown>;
      const wait = delay(n);
      const bill = (tokens: number) => bills.push({ upstream: name, tokens, at: Date.now() });
      if (r.path.endsWith('/embeddings')) {
        const input = ([] as unknown[]).concat(body.input) as string[];
        const tokens = Math.ceil(input.reduce((t, s) => t + Buffer.byteLength(s), 0) / 4);
        await sleep(wait);
        bill(tokens);
        return sendJson(res, 200, {
          object: 'list',
          model: 'text-embedding-3-small',
          data: input.map((_, index) => ({ object: 'embedding', index, embedding: [0.6, 0.8] })),
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        });
      }
      const completion = Number(body.max_completion_tokens ?? body.max_tokens ?? 1);
      const usage = {
        prompt_tokens: PROMPT_TOKENS,
        completion_tokens: completion,
        total_tokens: PROMPT_TOKENS + completion,
      };
      if (body.stream !== true) {
        await sleep(wait);
        bill(usage.total_tokens);
        return sendJson(res, 200, { ...openaiFixtures.completion(`from ${name}`), usage });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of ['from ', name]) {
        await sleep(wait / 3);
        if (res.destroyed) return;
        res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ content: piece }))}\n\n`);
      }
      await sleep(wait / 3);
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({}, 'stop'))}\n\n`);
      res.write(`data: ${JSON.stringify(openaiFixtures.usageChunk(PROMPT_TOKENS, completion))}\n\n`);
      bill(usage.total_tokens);
      res.end('data: [DONE]\n\n');
    };

  before(async function () {
    if (!POSTGRES_URL || !REDIS_URL) {
      console.warn(
        '    ! GATEWAY_TEST_POSTGRES_URL or GATEWAY_TEST_REDIS_URL is not set; the two-replica attempts test did not run',
      );
      this.skip();
    }
    for (const u of Object.values(up)) await u.start();
    up.failing.handler = (_r, res) => {
      allOpen.enter(res);
      sendJson(res, 500, { error: { message: 'overloaded', type: 'server_error' } });
    };
    for (const n of ['limited', 'perkey', 'chat', 'embed', 'secret'] as const) up[n].handler = answer(n, () => 0);
    // 30-80 ms, spread evenly, the same on every run.
    up.slow.handler = answer('slow', (n) => 30 + ((n * 37) % 51), slowOpen);

    const embeddings = (id: string, provider: string) => ({
      ...upstreamModel(id, provider),
      endpoints: ['embeddings'],
    });
    const cfg = {
      server: { host: '127.0.0.1', port: 0, log_level: 'info' },
      store: { driver: 'postgres', url: await freshPostgresUrl(), pool_size: 10 },
      providers: names.map((n) => upstreamProvider(n, up[n])),
      models: [
        ...['failing', 'limited', 'perkey', 'slow', 'chat', 'secret'].map((n) => upstreamModel(`acc/${n}`, n)),
        embeddings('acc/embed', 'embed'),
        embeddings('acc/embed-failing', 'failing'),
      ],
      plugins: [
        'auth',
        'params',
        // The failing upstream is never cooled down: it stays first in every plan, so each fallback is really taken.
        { fallback: { num_retries: 0, backoff_base_ms: 1, backoff_max_ms: 2, cooldown: { failures: 1000000 } } },
        {
          limits: {
            store: 'redis',
            redis: { url: REDIS_URL, prefix: `gw-test-${randomBytes(6).toString('hex')}:` },
            window_ms: WINDOW_MS,
            models: { 'acc/limited': { rpm: LIMITED_RPM } },
            key_models: { 'acc/perkey': { rpm: PER_KEY_RPM } },
          },
        },
        'credit',
        'routing',
      ],
    };
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
  });
  after(async () => {
    for (const p of procs) await p.stop();
    for (const u of Object.values(up)) await u.stop();
  });

  const send = (p: GatewayProcess, path: string, body: Record<string, unknown>, key: string) =>
    postJson(
      `${p.url}/v1/${path === 'chat' ? 'chat/completions' : path}`,
      path === 'chat' ? { messages, ...body } : body,
      {
        authorization: `Bearer ${key}`,
      },
    );

  it("300 mixed requests, 25 at once, over both replicas: no upstream sees more than the key's or a model's limits", async () => {
    const { key, hash } = await makeAccountKey(procs[0]);
    const set = await adminCall(procs[0], 'PUT', `/v1/keys/${hash}/limits`, {
      rate_limits: KEY,
      allowed_models: [
        'acc/failing',
        'acc/limited',
        'acc/perkey',
        'acc/slow',
        'acc/chat',
        'acc/embed',
        'acc/embed-failing',
      ],
    });
    expect(set.status).to.equal(200);

    // Both replicas warmed (connections, caches, every code path) by another key on models no limit counts; what the
    // upstreams count starts after.
    const warm = await makeAccountKey(procs[0]);
    for (const p of procs) {
      for (const { path, body } of KINDS.filter((k) => !/limited|perkey|secret/.test(JSON.stringify(k.body)))) {
        const r = await send(p, path, body, warm.key);
        expect(r.status, await r.text()).to.equal(200);
      }
      const rs = await Promise.all(Array.from({ length: 10 }, () => send(p, 'chat', { model: 'acc/chat' }, warm.key)));
      for (const r of rs) expect(r.status, await r.text()).to.equal(200);
    }
    for (const u of Object.values(up)) u.requests.length = 0;
    bills.length = 0;
    allOpen.max = slowOpen.max = 0;

    // Each wave sends the kinds still without a 200 first (so every kind gets an early place in some wave), then
    // the rest, starting 5 kinds further on each wave: every kind at least twice a wave.
    const started = Date.now();
    const sent: Sent[] = [];
    for (let wave = 0; wave < WAVES; wave++) {
      const rotated = KINDS.map((_, k) => KINDS[(wave * 5 + k) % KINDS.length]);
      const passed = (kind: string) => kind === 'not allowed' || sent.some((s) => s.kind === kind && s.status === 200);
      const order = [...rotated.filter((k) => !passed(k.kind)), ...rotated.filter((k) => passed(k.kind))];
      sent.push(
        ...(await Promise.all(
          Array.from({ length: WAVE }, async (_, j) => {
            const { kind, path, body } = order[j % order.length];
            const res = await send(procs[(wave + j) % 2], path, body, key);
            return { kind, wave, status: res.status, text: await res.text() };
          }),
        )),
      );
    }
    const elapsed = Date.now() - started;
    const ok = sent.filter((s) => s.status === 200);
    const billed = bills.filter((b) => b.at - started < WINDOW_MS).reduce((t, b) => t + b.tokens, 0);
    const report = describeRun(sent, elapsed, [
      `upstream calls: ${names.map((n) => `${n} ${up[n].requests.length}`).join(', ')}`,
      `open at once: all upstreams ${allOpen.max}, slow ${slowOpen.max}; billed ${billed} tokens in ${bills.length} answers`,
    ]);
    if (process.env.GATEWAY_TEST_VERBOSE) console.log(report);

    // Refusals are refusals: a 429 (a 403 for the model the key may not use) with a JSON error, never a 5xx.
    for (const s of sent) {
      if (s.status === 200) {
        expect(s.text, `${s.kind}\n${report}`).to.match(KINDS.find((k) => k.kind === s.kind)!.ok);
        continue;
      }
      expect(s.status, `${s.kind}: ${s.text}\n${report}`).to.equal(s.kind === 'not allowed' ? 403 : 429);
      const error = errorOf(s.text);
      expect(error.message, s.text).to.be.a('string');
      expect(error.code, s.text).to.be.oneOf(
        s.status === 403 ? ['model_not_allowed'] : ['rate_limit_exceeded', 'concurrency_limit_exceeded'],
      );
    }

    // The model's requests/min and the key x model's, whichever way the calls came, as the upstreams counted them.
    expect(up.limited.requests.length, report).to.be.at.most(LIMITED_RPM);
    expect(up.perkey.requests.length, report).to.be.at.most(PER_KEY_RPM);
    expect(up.secret.requests.length, report).to.equal(0);
    // The key's concurrency: never more requests open at the slow upstream, nor at all the upstreams together (a
    // fallback starts after its failed attempt ended), than it allows.
    expect(slowOpen.max, report).to.be.at.most(KEY.concurrency);
    expect(allOpen.max, report).to.be.at.most(KEY.concurrency);
    // The key's tokens/min: everything the upstreams billed within the window (the whole run is inside one).
    expect(elapsed, report).to.be.below(WINDOW_MS);
    expect(billed, report).to.be.at.most(KEY.tpm);
    // Each path on its own endpoint: chat models never got /embeddings, the embeddings model only /embeddings.
    for (const n of ['limited', 'perkey', 'slow', 'chat'] as const)
      expect(up[n].requests.filter((r) => r.path.endsWith('/embeddings')).length, n).to.equal(0);
    expect(up.embed.requests.filter((r) => !r.path.endsWith('/embeddings')).length).to.equal(0);
    // Fallbacks were taken: the failing upstream was tried first by the fallback kinds.
    expect(up.failing.requests.length, report).to.be.greaterThan(0);

    // The answers add up: each 200 is one upstream answer that billed, each counted against the key's requests/min,
    // and every kind of request got through at least once (the limits refused some, not everything).
    expect(ok.length, report).to.equal(bills.length);
    expect(ok.length, report).to.be.at.most(KEY.rpm);
    for (const { kind } of KINDS.filter((k) => k.kind !== 'not allowed'))
      expect(ok.filter((s) => s.kind === kind).length, `no ${kind} request got through\n${report}`).to.be.greaterThan(
        0,
      );
    // And the limits were reached: the key's concurrency, and its requests/min, tokens/min or a model's limit.
    for (const code of ['concurrency_limit_exceeded', 'rate_limit_exceeded'])
      expect(sent.filter((s) => errorOf(s.text).code === code).length, `${code}\n${report}`).to.be.greaterThan(0);
  });
});

/** Per wave, one letter per request: O 200, c concurrency, r requests/min, t tokens/min, m a model's limit, F 403. */
function describeRun(sent: Sent[], elapsed: number, lines: string[]): string {
  const letter = (s: Sent) => {
    if (s.status === 200) return 'O';
    if (s.status === 403) return 'F';
    const { code, message = '' } = errorOf(s.text);
    if (code === 'concurrency_limit_exceeded') return 'c';
    if (/this model/.test(message)) return 'm';
    return /tokens per minute/.test(message) ? 't' : s.status === 429 ? 'r' : '?';
  };
  const waves = Array.from({ length: WAVES }, (_, w) =>
    sent
      .filter((s) => s.wave === w)
      .map(letter)
      .join(''),
  );
  const kinds = KINDS.map(({ kind }) => {
    const mine = sent.filter((s) => s.kind === kind);
    return `${kind} ${mine.filter((s) => s.status === 200).length}/${mine.length}`;
  });
  return [
    `${elapsed} ms`,
    ...lines,
    `ok per kind: ${kinds.join(', ')}`,
    'waves (O ok, c/r/t/m 429, F 403):',
    ...waves,
  ].join('\n');
}

function errorOf(text: string): { message?: string; code?: string } {
  try {
    return (JSON.parse(text) as { error?: { message?: string; code?: string } }).error ?? {};
  } catch {
    return {};
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
