import { expect } from 'chai';
import { postJson } from '../helpers/gateway';
import { openaiFixtures, sendJson, type UpstreamHandler } from '../helpers/mock-upstream';
import { providerRig, weatherTool } from '../helpers/provider-gateway';
import { builtInParams, getAdapter, providerTypeNames } from '../../src/providers/registry';
import type { ParamTable } from '../../src/providers/shared/params';
import { ANTHROPIC_TABLE } from '../../src/providers/anthropic/params';
import { BEDROCK_TABLE } from '../../src/providers/bedrock/params';
import { COHERE_TABLE } from '../../src/providers/cohere/params';
import { GEMINI_TABLE } from '../../src/providers/gemini/params';
import { MISTRAL_TABLE } from '../../src/providers/mistral/params';
import { OLLAMA_TABLE } from '../../src/providers/ollama/params';

// Each provider's parameter table is data; these cases check it against the wire: a request
// carrying every field the table sends reaches the loopback upstream under the provider's
// own names and in its own place, with the values the table's transforms give.

/** Every sent field, set to a valid value. */
const sent: Record<string, unknown> = {
  temperature: 1.5,
  top_p: 0.9,
  top_k: 40,
  min_p: 0.1,
  seed: 7,
  random_seed: 3,
  repetition_penalty: 1.1,
  presence_penalty: 0.5,
  frequency_penalty: 0.25,
  max_completion_tokens: 100,
  max_tokens: 50,
  stop: 'END',
  n: 2,
  logprobs: true,
  top_logprobs: 2,
  user: 'user-1',
  response_format: { type: 'json_object' },
  tools: [weatherTool],
  tool_choice: 'required',
  parallel_tool_calls: true,
  safe_prompt: true,
  prediction: { type: 'content', content: 'x' },
  prompt_mode: 'reasoning',
};

interface Case {
  type: string;
  table: ParamTable;
  provider?: Record<string, unknown>;
  answer: UpstreamHandler;
  /** Where the table's fields land in the upstream body. */
  section: (body: Record<string, unknown>) => unknown;
  expected: Record<string, unknown>;
}

const cases: Case[] = [
  {
    type: 'anthropic',
    table: ANTHROPIC_TABLE,
    answer: (_r, res) =>
      sendJson(res, 200, {
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1 },
      }),
    section: (b) => b,
    expected: {
      temperature: 1,
      top_p: 0.9,
      top_k: 40,
      max_tokens: 100,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-1' },
    },
  },
  {
    type: 'gemini',
    table: GEMINI_TABLE,
    answer: (_r, res) =>
      sendJson(res, 200, { candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }),
    section: (b) => b.generationConfig,
    expected: {
      temperature: 1.5,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 100,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
      responseLogprobs: true,
      logprobs: 2,
    },
  },
  {
    type: 'ollama',
    table: OLLAMA_TABLE,
    answer: (_r, res) => sendJson(res, 200, { message: { role: 'assistant', content: 'ok' }, done: true }),
    section: (b) => b.options,
    expected: {
      temperature: 1.5,
      top_p: 0.9,
      top_k: 40,
      min_p: 0.1,
      seed: 7,
      repeat_penalty: 1.1,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      num_predict: 100,
      stop: ['END'],
    },
  },
  {
    type: 'cohere',
    table: COHERE_TABLE,
    answer: (_r, res) =>
      sendJson(res, 200, { message: { content: [{ type: 'text', text: 'ok' }] }, finish_reason: 'COMPLETE' }),
    section: (b) => b,
    expected: {
      temperature: 1.5,
      p: 0.9,
      k: 40,
      max_tokens: 100,
      seed: 7,
      frequency_penalty: 0.25,
      presence_penalty: 0.5,
      stop_sequences: ['END'],
    },
  },
  {
    type: 'bedrock',
    table: BEDROCK_TABLE,
    provider: { api_key: 'AKID:SECRET' },
    answer: (_r, res) =>
      sendJson(res, 200, { output: { message: { content: [{ text: 'ok' }] } }, stopReason: 'end_turn' }),
    section: (b) => b.inferenceConfig,
    expected: { maxTokens: 100, temperature: 1.5, topP: 0.9, stopSequences: ['END'] },
  },
  {
    type: 'mistral',
    table: MISTRAL_TABLE,
    answer: (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok')),
    section: (b) => b,
    expected: {
      temperature: 1.5,
      top_p: 0.9,
      max_tokens: 50,
      stop: 'END',
      n: 2,
      random_seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      response_format: { type: 'json_object' },
      tools: [weatherTool],
      tool_choice: 'any',
      parallel_tool_calls: true,
      safe_prompt: true,
      prediction: { type: 'content', content: 'x' },
      prompt_mode: 'reasoning',
    },
  },
];

describe('provider parameter names without the adapters', () => {
  it("every built-in type: the names read from its table alone are its adapter's supportedParams", () => {
    for (const type of providerTypeNames()) {
      const names = builtInParams(type);
      if (names) expect(names, type).to.deep.equal(getAdapter(type).supportedParams);
    }
  });
});

describe('provider parameter tables reach the wire', () => {
  for (const c of cases) {
    it(`${c.type}: every field the table sends arrives under the provider's name, in its place`, async () => {
      const accepted = new Set(getAdapter(c.type).supportedParams);
      expect([...accepted].sort()).to.deep.equal(Object.keys(c.table).sort());
      const fields = Object.keys(c.table).filter((k) => c.table[k].kind === 'send');
      for (const f of fields) expect(sent, `a value for ${f}`).to.have.property(f);
      // Predicted outputs are billed by the provider: the model prices them so that the gateway may send them.
      const rig = await providerRig(c.type, c.provider, {}, { billed_features: { predicted_outputs: {} } });
      try {
        rig.up.enqueue(c.answer);
        const body = { model: 'p/m', messages: [{ role: 'user', content: 'hi' }], ...pick(sent, fields) };
        const res = await postJson(`${rig.gw.url}/v1/chat/completions`, body);
        expect(res.status, JSON.stringify(res.json)).to.equal(200);
        const upstream = rig.up.requests[0].json as Record<string, unknown>;
        expect(c.section(upstream)).to.deep.include(c.expected);
        const section = c.section(upstream) as Record<string, unknown>;
        for (const f of fields.filter((k) => !(k in c.expected) && !renamedAway(c.table, k))) {
          expect(section, `${f} is sent under its own name`).to.have.property(f);
        }
      } finally {
        await rig.stop();
      }
    });
  }
});

function pick(from: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, from[k]]));
}

/** A field that sends under another name (that name is what the expectations list). */
function renamedAway(table: ParamTable, field: string): boolean {
  const rule = table[field];
  return rule.kind === 'send' && rule.to !== undefined && rule.to !== field;
}
