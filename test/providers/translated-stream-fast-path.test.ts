import { expect } from 'chai';
import fc from 'fast-check';
import { createAnthropicTranslator } from '../../src/providers/anthropic/stream';
import { createGeminiTranslator } from '../../src/providers/gemini/stream';
import { chatFrameOf } from '../../src/providers/same-wire';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../../src/providers/types';
import type { ChatCompletionChunk } from '../../src/types/openai';

/**
 * Translated streams read their common text events without a parse and serialise the chunk from a template
 * (docs/decisions/0036-translated-stream-fast-path.md). Property: for any stream of events, some of the common shape
 * and some not, the fast path gives what the full parse gives (the chunks, the usage so far, the end), and a frame
 * that is byte for byte what the writer serialises of the chunk (its stamps, then `"usage":null`). The full parse is
 * the same event with a leading space: the same JSON, a shape the fast path never reads.
 */
const ctx = (): AdapterContext =>
  ({ id: 'chatcmpl-x"y', created: 1741569952, model: 'an/m\u2028é', includeUsage: true }) as AdapterContext;

/** Text as upstreams send it: any characters (quotes, backslashes, controls, emoji, lone surrogates). */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(' the', '', '"', '\\', '\n', '\u0000', '\ud83d\ude00', '\ud800', '</script>', 'é'),
);

/** JSON.stringify's escapes, or the other valid ones an upstream may write (\u00e9, \/). */
function escapeOtherwise(s: string): string {
  return s.replace(/[^ -~]|\//g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const jsonString = (t: string, other: boolean) =>
  other ? `"${escapeOtherwise(t).replace(/"/g, '\\"')}"` : JSON.stringify(t);

type Ev = { data: string; event?: string };

const anthropicEvent = fc.oneof(
  fc
    .record({ t: text, other: fc.boolean(), index: fc.nat(12), named: fc.boolean() })
    .map(({ t, other, index, named }): Ev => ({
      ...(named ? { event: 'content_block_delta' } : {}),
      data: `{"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":${jsonString(t, other)}}}`,
    })),
  fc.constantFrom<Ev>(
    { event: 'ping', data: '{"type":"ping"}' },
    { data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","extra":1}}' },
    { data: '{"type":"content_block_delta","index":0,"delta":{"text":"b","type":"text_delta"}}' },
    { data: '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}' },
    { data: '{"type":"content_block_delta","index":00,"delta":{"type":"text_delta","text":"c"}}' },
    { data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"d\\"}}' },
    { data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"e","type":"x"}}' },
    { data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"f\u0001"}}' },
    { data: '{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"g"}}' },
    {
      event: 'message_delta',
      data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"h"}}',
    },
  ),
);

const anthropicStart: Ev[] = [
  { event: 'message_start', data: '{"type":"message_start","message":{"usage":{"input_tokens":7}}}' },
  { event: 'content_block_start', data: '{"type":"content_block_start","index":0,"content_block":{"type":"text"}}' },
];

const usageMetadata = fc.option(
  fc.record({ promptTokenCount: fc.nat(99), candidatesTokenCount: fc.nat(99), totalTokenCount: fc.nat(999) }),
  { nil: undefined },
);

const geminiEvent = fc.oneof(
  fc
    .record({ t: text, other: fc.boolean(), index: fc.boolean(), usage: usageMetadata, id: fc.boolean() })
    .map(({ t, other, index, usage, id }): Ev => {
      const tail = `${usage ? `,"usageMetadata":${JSON.stringify(usage)}` : ''}${id ? ',"modelVersion":"g","responseId":"r"' : ''}`;
      return {
        data: `{"candidates":[{"content":{"parts":[{"text":${jsonString(t, other)}}],"role":"model"}${index ? ',"index":0' : ''}}]${tail}}`,
      };
    }),
  fc.constantFrom<Ev>(
    { data: '{"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"},"index":1}]}' },
    { data: '{"candidates":[{"content":{"parts":[{"text":"b","thought":true}],"role":"model"}}]}' },
    { data: '{"candidates":[{"content":{"parts":[{"text":"c"}],"role":"model"}}],"candidates":[]}' },
    { data: '{"candidates":[{"content":{"parts":[{"text":"d"}],"role":"model"}}],"error":{"code":500}}' },
    { data: '{"candidates":[{"content":{"parts":[{"text":"e"}],"role":"model"}}],"x":1}}' },
    { data: '{"candidates":[{"content":{"parts":[{"text":"f"}],"role":"model"},"finishReason":"STOP"}]}' },
    { data: '{"candidates":[{"content":{"parts":[{"text":"g\\"}],"role":"model"}}]}' },
    { data: '{"candidates":[{"content":{"parts":[{"text":"h"}],"role":"model"}}],"promptFeedback":{}}' },
  ),
);

const geminiStart: Ev[] = [{ data: '{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}]}' }];

/** What the writer sends of a chunk it serialises itself: stamps set, then `usage: null`. */
function serialised(c: ChatCompletionChunk, stampJson: string): string {
  const copy = JSON.parse(JSON.stringify(c)) as Record<string, unknown>;
  if (stampJson) copy.provider = 'an';
  copy.usage = null;
  return `data: ${JSON.stringify(copy)}\n\n`;
}

type Outcome =
  { chunks: string; frames: Array<[string, string] | null>; usage: string; done: boolean } | { error: string };

function step(t: StreamTranslator, ev: UpstreamEvent): Outcome {
  let chunks: ChatCompletionChunk[];
  try {
    chunks = t.push(ev);
  } catch (e) {
    return { error: `${(e as { code?: string }).code}: ${(e as Error).message}` };
  }
  return {
    chunks: JSON.stringify(chunks),
    frames: chunks.map((c) => {
      const f = chatFrameOf(c);
      return f ? [f.frame, f.frameWith(',"provider":"an"')] : null;
    }),
    usage: JSON.stringify(t.usageSoFar?.()),
    done: t.done,
  };
}

function compare(create: (c: AdapterContext) => StreamTranslator, start: Ev[], events: Ev[]): number {
  const fast = create(ctx());
  const full = create(ctx());
  let framed = 0;
  for (const ev of [...start, ...events]) {
    const a = step(fast, ev);
    const b = step(full, { ...ev, data: ` ${ev.data}` });
    if ('error' in a || 'error' in b) {
      expect(a, ev.data).to.deep.equal(b);
      return framed; // a stream ends at its first error
    }
    expect(a.chunks, ev.data).to.equal(b.chunks);
    expect(a.usage, ev.data).to.equal(b.usage);
    expect(a.done, ev.data).to.equal(b.done);
    expect(b.frames.every((f) => f === null)).to.equal(true);
    const chunks = JSON.parse(a.chunks) as ChatCompletionChunk[];
    a.frames.forEach((f, i) => {
      if (f === null) return;
      framed++;
      expect(f[0], ev.data).to.equal(serialised(chunks[i], ''));
      expect(f[1], ev.data).to.equal(serialised(chunks[i], ',"provider":"an"'));
    });
  }
  return framed;
}

describe('translated streams: the fast path gives what the full parse gives', () => {
  it('Anthropic: chunks, usage and frames equal for any stream of events', () => {
    fc.assert(
      fc.property(
        fc.array(anthropicEvent, { maxLength: 12 }),
        (events) => void compare(createAnthropicTranslator, anthropicStart, events),
      ),
      { numRuns: 400 },
    );
  });

  it('Gemini: chunks, usage and frames equal for any stream of events', () => {
    fc.assert(
      fc.property(
        fc.array(geminiEvent, { maxLength: 12 }),
        (events) => void compare(createGeminiTranslator, geminiStart, events),
      ),
      { numRuns: 400 },
    );
  });

  it('the common shapes are read by the fast path (they carry a frame)', () => {
    const an = [' the', ' gateway', 'caf\u00e9 "q"', '\ud83d\ude00'].map((t) => ({
      event: 'content_block_delta',
      data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(t)}}}`,
    }));
    expect(compare(createAnthropicTranslator, anthropicStart, an)).to.equal(4);
    const ge = [' the', ' gateway', 'caf\u00e9 "q"'].map((t) => ({
      data: `{"candidates":[{"content":{"parts":[{"text":${JSON.stringify(t)}}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4},"modelVersion":"gemini-2.0-flash","responseId":"r1"}`,
    }));
    expect(compare(createGeminiTranslator, geminiStart, ge)).to.equal(3);
  });
});
