import { expect } from 'chai';
import fc from 'fast-check';
import { Agent } from 'undici';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../helpers/accounts';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';

/**
 * JSON text nested `n` deep, alternating arrays and objects (what overflowed the stack before). It is written as
 * text and put in place of a marker after JSON.stringify, which would itself overflow on such a value.
 */
const nestedText = (n: number): string => {
  let open = '';
  let close = '';
  for (let i = 0; i < n; i++) {
    open += i % 2 === 0 ? '[' : '{"a":';
    close = (i % 2 === 0 ? ']' : '}') + close;
  }
  return `${open}1${close}`;
};
const DEEP = /"@@deep:(\d+)@@"/g;
const withDeep = (json: string) => json.replace(DEEP, (_m, n: string) => nestedText(Number(n)));

const anyText = fc.string({ unit: 'binary', maxLength: 30 });
const fieldNames = fc.constantFrom(
  'tools',
  'tool_calls',
  'messages',
  'metadata',
  'response_format',
  'zz_unknown',
  'headers',
  'extra_headers',
  'stop',
  'logit_bias',
  'tool_choice',
  'n',
  'max_tokens',
  'temperature',
  'user',
  'timeout',
  'fallbacks',
  'models',
);
const fieldValue = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 65, max: 6000 }).map((n) => `@@deep:${n}@@`),
  anyText,
  fc.dictionary(anyText, anyText, { maxKeys: 5 }),
  // A client's own timeout: invalid types and sizes, but no positive value so short that the 504 is the point.
  fc.oneof(fc.constant(0), fc.constant(-1), fc.constant('5'), fc.double({ min: 1, max: 900, noNaN: true })),
);
const message = fc.oneof(
  fc.record({
    role: fc.constantFrom('user', 'system', 'assistant', 'tool', 'developer', 'x'),
    content: fc.oneof(anyText, fc.jsonValue({ maxDepth: 3 })),
  }),
  fc.jsonValue({ maxDepth: 3 }),
);
const chatBody = fc
  .record({
    model: fc.oneof(fc.constantFrom('mock/gpt-4o-mini', 'up/m'), anyText),
    messages: fc.oneof(fc.array(message, { maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })),
    stream: fc.option(fc.boolean(), { nil: undefined }),
    extra: fc.dictionary(fieldNames, fieldValue, { maxKeys: 3 }),
  })
  .map(({ extra, ...b }) => {
    const body: Record<string, unknown> = { ...b, ...extra };
    // A timeout that is not a number the client meant as seconds is kept only when it is invalid (400) or long.
    if (typeof body.timeout === 'number' && body.timeout > 0 && body.timeout < 1) delete body.timeout;
    return withDeep(JSON.stringify(body));
  });
/** A well-formed request with something valid-looking nested deep inside it, where the chain looks (tool schemas, tool calls). */
const deepInside = fc
  .record({
    depth: fc.integer({ min: 40, max: 6000 }),
    where: fc.constantFrom('tool_parameters', 'tool_call', 'response_format', 'unknown', 'message_content'),
    stream: fc.boolean(),
    model: fc.constantFrom('mock/gpt-4o-mini', 'up/m'),
  })
  .map(({ depth, where, stream, model }) => {
    const deep = '"@@deep:' + depth + '@@"';
    const user = '{"role":"user","content":"hi"}';
    const head = `{"model":"${model}","stream":${stream},`;
    const body = {
      tool_parameters: `${head}"messages":[${user}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":${deep}}}}}]}`,
      tool_call: `${head}"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"x":${deep}}]},${user}]}`,
      response_format: `${head}"messages":[${user}],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":${deep}}}}`,
      unknown: `${head}"messages":[${user}],"zz":${deep}}`,
      message_content: `${head}"messages":[{"role":"user","content":[{"type":"text","text":"x","extra":${deep}}]}]}`,
    }[where];
    return withDeep(body);
  });
const bodies = fc.oneof(
  { weight: 3, arbitrary: deepInside },
  { weight: 7, arbitrary: chatBody },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
);

describe('hostile: 10,000 fuzzed bodies against the default chain (issue 15, item 1)', function () {
  this.timeout(600_000);
  let gw: TestGateway;
  let up: MockUpstream;
  let key: string;
  const agent = new Agent({ connections: 8 });

  before(async () => {
    up = await new MockUpstream().start();
    up.handler = async (r, res) => {
      if ((r.json as { stream?: boolean } | undefined)?.stream)
        await writeSse(res, [
          openaiFixtures.chunk({ role: 'assistant', content: 'ok' }),
          openaiFixtures.chunk({}, 'stop'),
        ]);
      else sendJson(res, 200, openaiFixtures.completion('ok'));
    };
    gw = await startTestGateway(
      testConfig({
        server: { host: '127.0.0.1', port: 0, log_level: 'silent', shutdown_grace_ms: 500, admin_key: ADMIN_KEY },
        providers: [
          { name: 'mock', type: 'mock' },
          { name: 'up', type: 'openai', api_base: `${up.url}/v1`, api_key: 'sk-fuzz-upstream-key' },
        ],
        models: [
          {
            id: 'mock/gpt-4o-mini',
            pricing: { prompt: 0.000001, completion: 0.000002 },
            deployments: [{ provider: 'mock', model: 'mock-small' }],
          },
          { id: 'up/m', deployments: [{ provider: 'up', model: 'gpt-4o-mini' }] },
        ],
        plugins: [
          'metrics',
          'auth',
          'params',
          { fallback: { num_retries: 2 } },
          'limits',
          'credit',
          'storage',
          'routing',
        ],
      }),
    );
    key = (await makeAccountKey(gw, { credits: 1_000_000 })).key;
  });
  after(async () => {
    await gw.stop();
    await up.stop();
    await agent.close();
  });

  it('answers every one without a 5xx; every error is the four-string object', async () => {
    const samples = fc.sample(bodies, { numRuns: 10_000, seed: 15 });
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < samples.length) {
        const body = samples[next++];
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body,
          // @ts-expect-error undici's dispatcher option on Node's fetch
          dispatcher: agent,
        });
        const text = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500) failures.push(`${res.status} ${text.slice(0, 200)} <- ${body.slice(0, 200)}`);
        if (res.status >= 400) {
          let err: Record<string, unknown> | undefined;
          try {
            err = (JSON.parse(text) as { error?: Record<string, unknown> }).error;
          } catch {
            err = undefined;
          }
          if (!err || !['message', 'type', 'param', 'code'].every((f) => typeof err[f] === 'string'))
            failures.push(`not the error object: ${text.slice(0, 200)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    console.log(`      statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
    expect(failures.slice(0, 10)).to.deep.equal([]);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).to.equal(10_000);
    // The deep bodies were among them, and were 400s naming their field.
    expect(statuses.get(400) ?? 0).to.be.greaterThan(1000);
  });
});
