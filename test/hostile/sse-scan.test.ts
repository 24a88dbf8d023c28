import { expect } from 'chai';
import fc from 'fast-check';
import { SseParser } from '../../src/transport/sse';
import { SizeLimitError } from '../../src/transport/limits';
import type { UpstreamEvent } from '../../src/providers/types';

/**
 * The SSE parser takes the common events of a read in one pass (src/transport/sse-scan.ts) and the rest through the
 * line splitter. Property: for any mix of common and other events, line ends and limits, cut anywhere, the events (or
 * the size error) are what the event-stream format says: a reference that splits the whole text into lines first.
 */
function reference(text: string, max: number): UpstreamEvent[] | string {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = text.split(/\r\n|\r|\n/);
  const last = lines.pop()!; // the text after the last line end: a line only at the end of the stream
  if (last !== '') lines.push(last);
  const out: UpstreamEvent[] = [];
  let data: string[] = [];
  let bytes = 0;
  let event: string | undefined;
  const dispatch = () => {
    if (data.length > 0) out.push({ ...(event !== undefined ? { event } : {}), data: data.join('\n') });
    data = [];
    bytes = 0;
    event = undefined;
  };
  for (const line of lines) {
    if (line.length > max) return 'a stream line';
    if (line === '') dispatch();
    else if (line[0] !== ':') {
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value[0] === ' ') value = value.slice(1);
      if (field === 'data') {
        bytes += value.length + 1;
        if (bytes > max) return 'a stream event';
        data.push(value);
      } else if (field === 'event') event = value;
    }
  }
  dispatch();
  return out;
}

function parse(bytes: Buffer, cuts: number[], max: number): UpstreamEvent[] | string {
  const p = new SseParser(max);
  const out: UpstreamEvent[] = [];
  let at = 0;
  try {
    for (const c of [...cuts].sort((a, b) => a - b)) {
      p.push(bytes.subarray(at, c), out);
      at = c;
    }
    p.push(bytes.subarray(at), out);
    return p.end(out);
  } catch (e) {
    if (e instanceof SizeLimitError) return e.what;
    throw e;
  }
}

const payload = fc.string({
  unit: fc.constantFrom('a', ' ', ':', '"', 'é', '\u{1f600}', 'data', '\ufeff'),
  maxLength: 8,
});
const name = fc.constantFrom('content_block_delta', 'ping', '', ' x');
const eol = fc.constantFrom('\n', '\r\n');
/** The form nearly every upstream writes, LF or CRLF. */
const common = fc
  .record({ event: fc.option(name, { nil: undefined }), data: payload, eol, space: fc.boolean() })
  .map(
    ({ event, data, eol: e, space }) =>
      `${event !== undefined ? `event:${space ? ' ' : ''}${event}${e}` : ''}data:${space ? ' ' : ''}${data}${e}${e}`,
  );
/** Everything else the format allows, and a few line ends mixed. */
const other = fc.oneof(
  fc.tuple(payload, payload).map(([a, b]) => `data: ${a}\ndata: ${b}\n\n`),
  payload.map((a) => `: comment ${a}\ndata: ${a}\n\n`),
  payload.map((a) => `data: ${a}\r\r`),
  payload.map((a) => `data: ${a}\r\n\n`),
  payload.map((a) => `data: ${a}\n\r\n`),
  payload.map((a) => `id: 1\ndata: ${a}\n\n`),
  payload.map((a) => `data: ${a}\nevent: late\n\n`),
  payload.map((a) => `event: ${a}\n\n`),
  fc.constantFrom('\n', '\r\n', '\r', 'data\n\n', 'data:\n\n', 'retry: 5\n\n', 'data: a\rb\n\n', 'eventx: 1\n\n'),
);

describe('SSE: common events in one pass, the rest through the line splitter', () => {
  it('gives what the format says for any mix, limit and cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof({ arbitrary: common, weight: 3 }, { arbitrary: other, weight: 1 }), { maxLength: 10 }),
        fc.boolean(),
        fc.constantFrom(1 << 20, 12, 24, 40),
        fc.integer({ min: 0, max: 1000 }),
        (blocks, bom, max, seed) => {
          const text = (bom ? '\ufeff' : '') + blocks.join('');
          const bytes = Buffer.from(text, 'utf8');
          const cuts = fc.sample(fc.uniqueArray(fc.integer({ min: 0, max: bytes.length }), { maxLength: 8 }), {
            numRuns: 1,
            seed,
          })[0];
          expect(parse(bytes, cuts, max), JSON.stringify(text)).to.deep.equal(reference(text, max));
        },
      ),
      { seed: 44, numRuns: 2000 },
    );
  });

  it('a long run of common events in one read comes out whole and in order', () => {
    const text = Array.from({ length: 500 }, (_, i) => `event: e${i}\r\ndata: {"i":${i}}\r\n\r\n`).join('');
    const got = parse(Buffer.from(text), [], 1 << 20);
    expect(got).to.deep.equal(Array.from({ length: 500 }, (_, i) => ({ event: `e${i}`, data: `{"i":${i}}` })));
  });
});
