import { expect } from 'chai';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import OpenAI from 'openai';
import { parseConfig } from '../../src/config/load';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY } from '../helpers/accounts';
import { keyedClient } from '../helpers/sdk';

/** Schemas of the kind structured-output clients send (zod-to-json-schema, pydantic): refs, enums, unions, nullables, formats, bounds. */
const schemas: Array<Record<string, unknown>> = [
  {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 18 } },
    required: ['name', 'age'],
    additionalProperties: false,
  },
  {
    type: 'object',
    properties: {
      steps: { type: 'array', items: { $ref: '#/$defs/step' }, minItems: 2 },
      final_answer: { type: 'string', minLength: 12 },
    },
    required: ['steps', 'final_answer'],
    additionalProperties: false,
    $defs: {
      step: {
        type: 'object',
        properties: { explanation: { type: 'string' }, output: { type: 'string' } },
        required: ['explanation', 'output'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'object',
    properties: {
      kind: { enum: ['cat', 'dog'] },
      when: { type: 'string', format: 'date-time' },
      email: { type: 'string', format: 'email' },
      note: { type: ['string', 'null'] },
      pet: {
        anyOf: [
          { type: 'object', properties: { legs: { type: 'number', exclusiveMinimum: 0 } }, required: ['legs'] },
          { type: 'null' },
        ],
      },
      fixed: { const: 'v1' },
      flag: { type: 'boolean' },
    },
    required: ['kind', 'when', 'email', 'note', 'pet', 'fixed', 'flag'],
    additionalProperties: false,
  },
];

describe('mock provider on the default gateway.yaml: response_format and logprobs (openai SDK over a socket)', () => {
  let gw: TestGateway;
  let client: OpenAI;
  before(async () => {
    // The root gateway.yaml as it is, with its SQLite file in a temporary directory.
    const db = join(mkdtempSync(join(tmpdir(), 'gw-mock-')), 'gateway.db');
    const text = readFileSync('gateway.yaml', 'utf8').replace(/^(\s*path:) \.\/data\/gateway\.db/m, `$1 ${db}`);
    expect(text).to.include(db);
    gw = await startTestGateway(parseConfig(text, { env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, baseDir: process.cwd() }));
    ({ client } = await keyedClient(gw, { credits: 100 }));
  });
  after(() => gw.stop());

  it('chat.completions.parse() with a json_schema response_format gets a parsed value that matches the schema', async () => {
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    for (const [i, schema] of schemas.entries()) {
      const c = await client.chat.completions.parse({
        model: 'mock/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Give me data' }],
        response_format: { type: 'json_schema', json_schema: { name: `s${i}`, schema, strict: true } },
      });
      const parsed = c.choices[0].message.parsed;
      expect(parsed, `schema ${i}`).to.not.equal(null);
      expect(ajv.validate(schema, parsed), `schema ${i}: ${ajv.errorsText()}`).to.equal(true);
    }
  });

  it('json_object answers valid JSON, plain and streamed', async () => {
    const c = await client.chat.completions.create({
      model: 'mock/gpt-4o-mini',
      response_format: { type: 'json_object' },
      messages: [{ role: 'user', content: 'Answer in JSON: hi' }],
    });
    expect(JSON.parse(c.choices[0].message.content ?? '')).to.deep.equal({ answer: 'Mock answer: Answer in JSON: hi' });
    const stream = await client.chat.completions.create({
      model: 'mock/gpt-4o-mini',
      stream: true,
      response_format: { type: 'json_object' },
      messages: [{ role: 'user', content: 'Answer in JSON: hi' }],
    });
    let text = '';
    for await (const ch of stream) text += ch.choices[0]?.delta.content ?? '';
    expect(JSON.parse(text)).to.deep.equal({ answer: 'Mock answer: Answer in JSON: hi' });
  });

  it('logprobs: one entry per token with top_logprobs alternatives, the same every time, and the same streamed', async () => {
    const ask = {
      model: 'mock/gpt-4o-mini',
      logprobs: true,
      top_logprobs: 3,
      messages: [{ role: 'user' as const, content: 'tell me about logprobs' }],
    };
    const a = await client.chat.completions.create(ask);
    const b = await client.chat.completions.create(ask);
    const content = a.choices[0].logprobs?.content ?? [];
    expect(content.map((t) => t.token).join('')).to.equal(a.choices[0].message.content);
    expect(content.length).to.equal(a.usage?.completion_tokens);
    for (const t of content) {
      expect(t.logprob).to.be.at.most(0);
      expect(t.top_logprobs).to.have.length(3);
      expect(t.top_logprobs[0]).to.deep.include({ token: t.token, logprob: t.logprob });
      expect(t.bytes).to.deep.equal([...Buffer.from(t.token)]);
    }
    expect(b.choices[0].logprobs).to.deep.equal(a.choices[0].logprobs);
    const stream = await client.chat.completions.create({ ...ask, stream: true });
    const streamed: unknown[] = [];
    for await (const ch of stream) streamed.push(...(ch.choices[0]?.logprobs?.content ?? []));
    expect(streamed).to.deep.equal(content);
    const none = await client.chat.completions.create({ model: 'mock/gpt-4o-mini', messages: ask.messages });
    expect(none.choices[0].logprobs).to.equal(null);
  });
});
