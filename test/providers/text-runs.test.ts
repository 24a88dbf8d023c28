import { expect } from 'chai';
import fc from 'fast-check';
import { createAnthropicTranslator } from '../../src/providers/anthropic/stream';
import { createGeminiTranslator } from '../../src/providers/gemini/stream';
import { createCompatibleTranslator, createOpenAITranslator } from '../../src/providers/openai/stream';
import { chatFrameOf, type ChatFrame } from '../../src/providers/same-wire';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../../src/providers/types';
import type { ChatCompletionChunk } from '../../src/types/openai';

/**
 * Text runs (docs/decisions/0065-text-runs.md): a translator given the events of one read at once (pushEvents) joins
 * its consecutive text chunks into one. Property: for any stream of events, cut into reads anywhere, the runs stand
 * for exactly the chunks `push` gives event by event: each part's frame and whole chunk are theirs, a run's frame is
 * their frames in order and its content their texts joined; the usage so far, the end and a failure (after the chunks
 * before it) are the same.
 */
const ctx = (): AdapterContext =>
  ({ id: 'chatcmpl-x"y', created: 1741569952, model: 'an/m\u2028é', includeUsage: true }) as AdapterContext;

/** Text as upstreams send it: any characters (quotes, backslashes, controls, emoji, lone surrogates). */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom(' the', '', '"', '\\', '\n', '\ud83d\ude00', '\ud800', 'é'),
);

/** A text's JSON string as JSON.stringify writes it, or with other valid escapes (\u00e9, \/). */
const jsonString = (t: string, other: boolean) =>
  other
    ? `"${t.replace(/[^ -~]|\/|"|\\/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`
    : JSON.stringify(t);

type Ev = UpstreamEvent;

const OA_HEAD = '"id":"chatcmpl-up","object":"chat.completion.chunk","created":17,"model":"m"';
const openaiEvent = fc
  .oneof(
    { weight: 4, arbitrary: fc.record({ t: text, other: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ t: text, other: fc.boolean(), created: fc.constantFrom(18, 19) }) },
    { weight: 1, arbitrary: fc.record({ t: text, other: fc.boolean(), index: fc.constantFrom(1, 2) }) },
    { weight: 1, arbitrary: fc.record({ t: text, other: fc.boolean(), mark: fc.constantFrom('a', 'b') }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        { data: `{${OA_HEAD},"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` },
        { data: `{${OA_HEAD},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` },
        { data: `{${OA_HEAD},"choices":[{"index":0,"delta":{"content":null},"finish_reason":null}]}` },
        { data: `{${OA_HEAD},"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` },
        {
          data: `{${OA_HEAD},"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`,
        },
        { data: '{"error":{"message":"boom","type":"server_error"}}' },
        { data: '[DONE]' },
      ),
    },
  )
  .map((e): Ev => {
    if ('data' in e) return e as Ev;
    const r = e as { t: string; other: boolean; created?: number; index?: number; mark?: string };
    const head = OA_HEAD.replace('17', String(r.created ?? 17));
    const mark = r.mark ? `,"obfuscation":"${r.mark}"` : '';
    return {
      data: `{${head},"choices":[{"index":${r.index ?? 0},"delta":{"content":${jsonString(r.t, r.other)}},"logprobs":null,"finish_reason":null}],"usage":null${mark}}`,
    };
  });

const anthropicEvent = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ t: text, other: fc.boolean(), named: fc.boolean() }).map(({ t, other, named }): Ev => ({
      ...(named ? { event: 'content_block_delta' } : {}),
      data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${jsonString(t, other)}}}`,
    })),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Ev>(
      { event: 'ping', data: '{"type":"ping"}' },
      { data: '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}' },
      { data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","extra":1}}' },
      { event: 'content_block_stop', data: '{"type":"content_block_stop","index":0}' },
      { event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"busy"}}' },
      {
        event: 'message_delta',
        data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}',
      },
      { event: 'message_stop', data: '{"type":"message_stop"}' },
    ),
  },
);
const anthropicStart: Ev[] = [
  { event: 'message_start', data: '{"type":"message_start","message":{"usage":{"input_tokens":7}}}' },
  { event: 'content_block_start', data: '{"type":"content_block_start","index":0,"content_block":{"type":"text"}}' },
];

const geminiEvent = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ t: text, other: fc.boolean(), usage: fc.boolean() }).map(({ t, other, usage }): Ev => ({
      data: `{"candidates":[{"content":{"parts":[{"text":${jsonString(t, other)}}],"role":"model"},"index":0}]${usage ? ',"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}' : ''}}`,
    })),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Ev>(
      { data: '{"candidates":[{"content":{"parts":[{"text":"b","thought":true}],"role":"model"}}]}' },
      { data: '{"candidates":[{"content":{"parts":[{"text":"f"}],"role":"model"},"finishReason":"STOP"}]}' },
      { data: '{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}' },
    ),
  },
);
const geminiStart: Ev[] = [{ data: '{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}]}' }];

const STAMP = ',"provider":"p"';

/** What a stream's reader gets of one chunk: its frame (plain and stamped) and its whole form. */
interface Seen {
  frame?: [string, string];
  whole: string;
}

function seen(c: ChatCompletionChunk, f: ChatFrame | undefined): Seen {
  return f ? { frame: [f.frame, f.frameWith(STAMP)], whole: JSON.stringify(f.full()) } : { whole: JSON.stringify(c) };
}

interface Outcome {
  chunks: Seen[];
  usage: string[];
  done: boolean;
  error?: string;
}

const errorOf = (e: unknown) => `${(e as { code?: string }).code}: ${(e as Error).message}`;

/** The stream event by event (push), as every reader got it before runs. */
function oneByOne(t: StreamTranslator, reads: Ev[][]): Outcome {
  const o: Outcome = { chunks: [], usage: [], done: false };
  for (const read of reads) {
    try {
      for (const ev of read) for (const c of t.push(ev)) o.chunks.push(seen(c, chatFrameOf(c)));
    } catch (e) {
      o.error = errorOf(e);
      break;
    }
    o.usage.push(JSON.stringify(t.usageSoFar?.()));
  }
  o.done = t.done;
  return o;
}

/** The stream a read at a time (pushEvents), each run checked against its parts and taken apart. */
function byReads(t: StreamTranslator, reads: Ev[][]): Outcome & { runs: number } {
  const o: Outcome & { runs: number } = { chunks: [], usage: [], done: false, runs: 0 };
  for (const read of reads) {
    const out: ChatCompletionChunk[] = [];
    let error: string | undefined;
    try {
      t.pushEvents!(read, out);
    } catch (e) {
      error = errorOf(e);
    }
    for (const c of out) {
      const f = chatFrameOf(c);
      if (f?.count === undefined) {
        o.chunks.push(seen(c, f));
        continue;
      }
      o.runs++;
      const parts = f.parts!();
      expect(parts.length).to.equal(f.count);
      expect(f.frame).to.equal(parts.map((p) => p.frame).join(''));
      expect(f.frameWith(STAMP)).to.equal(parts.map((p) => p.frameWith(STAMP)).join(''));
      const texts = parts.map((p) => p.full().choices[0].delta.content ?? '');
      expect(c.choices[0].delta.content).to.equal(texts.join(''));
      for (const p of parts) o.chunks.push(seen(p.full(), p));
    }
    if (error !== undefined) {
      o.error = error;
      break;
    }
    o.usage.push(JSON.stringify(t.usageSoFar?.()));
  }
  o.done = t.done;
  return o;
}

/** The events cut into reads at `cuts` (indexes into the events, any order, repeats allowed). */
function cut(events: Ev[], cuts: number[]): Ev[][] {
  const at = [...new Set(cuts.map((c) => c % (events.length + 1)))].sort((a, b) => a - b);
  const reads: Ev[][] = [];
  let from = 0;
  for (const c of [...at, events.length]) {
    reads.push(events.slice(from, c));
    from = c;
  }
  return reads;
}

function compare(
  create: (c: AdapterContext) => StreamTranslator,
  start: readonly Ev[],
  events: Ev[],
  cuts: number[],
): number {
  const reads = cut([...start, ...events], cuts);
  const runs = byReads(create(ctx()), reads);
  const { runs: count, ...rest } = runs;
  expect(rest).to.deep.equal(oneByOne(create(ctx()), reads));
  return count;
}

const cuts = fc.array(fc.nat(40), { maxLength: 5 });

describe('text runs: the chunks of one read, joined, are the chunks event by event', () => {
  for (const [name, create, start, event] of [
    ['OpenAI (same wire)', createOpenAITranslator, [], openaiEvent],
    ['Mistral, Azure (same wire)', (c: AdapterContext) => createCompatibleTranslator(c, 'mistral'), [], openaiEvent],
    ['Anthropic', createAnthropicTranslator, anthropicStart, anthropicEvent],
    ['Gemini', createGeminiTranslator, geminiStart, geminiEvent],
  ] as const)
    it(`${name}: any events, cut into reads anywhere`, () => {
      let runs = 0;
      fc.assert(
        fc.property(fc.array(event, { maxLength: 24 }), cuts, (events, at) => {
          runs += compare(create, start, events, at);
        }),
        { numRuns: 300 },
      );
      // The property is not vacuous: runs were made.
      expect(runs).to.be.above(20);
    });

  it('a read of common text events is one run; a read with another event between them is two', () => {
    const an = (t: string): Ev => ({
      event: 'content_block_delta',
      data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(t)}}}`,
    });
    const t = createAnthropicTranslator(ctx());
    const out: ChatCompletionChunk[] = [];
    t.pushEvents!([...anthropicStart, an(' a'), an(' b'), an(' c')], out);
    expect(out.map((c) => chatFrameOf(c)?.count)).to.deep.equal([undefined, 3]);
    expect(out[1].choices[0].delta.content).to.equal(' a b c');
    const next: ChatCompletionChunk[] = [];
    t.pushEvents!([an(' d'), { event: 'ping', data: '{"type":"ping"}' }, an(' e'), an(' f')], next);
    expect(next.map((c) => chatFrameOf(c)?.count)).to.deep.equal([undefined, 2]);
  });
});
