import { expect } from 'chai';
import fc from 'fast-check';
import { NdjsonParser, SseParser } from '../../src/transport/sse';
import { AwsEventStreamParser, encodeEventMessage } from '../../src/transport/aws-eventstream';
import { SizeLimitError } from '../../src/transport/limits';
import type { UpstreamEvent } from '../../src/providers/types';

/** Feed `bytes` to a parser cut at the given points; all events out. */
function feed(
  p: { push(c: Uint8Array, out?: UpstreamEvent[]): UpstreamEvent[]; end(out?: UpstreamEvent[]): UpstreamEvent[] },
  bytes: Uint8Array,
  cuts: number[],
): UpstreamEvent[] {
  const out: UpstreamEvent[] = [];
  let at = 0;
  for (const c of [...cuts].sort((a, b) => a - b)) {
    p.push(bytes.subarray(at, c), out);
    at = c;
  }
  p.push(bytes.subarray(at), out);
  return p.end(out);
}

const cutsOf = (n: number) => fc.uniqueArray(fc.integer({ min: 0, max: n }), { maxLength: 12 });

describe('hostile: bounded linear stream parsers (issue 15, item 3)', () => {
  const events = fc.array(
    fc.record({
      event: fc.option(fc.constantFrom('message_start', 'delta', 'x'), { nil: undefined }),
      data: fc.array(
        fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, '')),
        { minLength: 1, maxLength: 3 },
      ),
    }),
    { maxLength: 6 },
  );
  const eol = fc.constantFrom('\n', '\r', '\r\n');

  it('SSE: any cut of the bytes, with LF, CR or CRLF line ends, gives the same events', () => {
    fc.assert(
      fc.property(events, eol, fc.integer({ min: 0, max: 1000 }), (evs, nl, seed) => {
        const text = evs
          .map(
            (e) =>
              `${e.event !== undefined ? `event: ${e.event}${nl}` : ''}${e.data.map((d) => `data: ${d}${nl}`).join('')}: comment${nl}${nl}`,
          )
          .join('');
        const bytes = Buffer.from(text, 'utf8');
        const cuts = fc.sample(cutsOf(bytes.length), { numRuns: 1, seed })[0];
        const got = feed(new SseParser(), bytes, cuts);
        const want = evs.map((e) => ({
          ...(e.event !== undefined ? { event: e.event } : {}),
          data: e.data.join('\n'),
        }));
        expect(got).to.deep.equal(want);
      }),
      { seed: 15, numRuns: 300 },
    );
  });

  it('any bytes, cut anywhere (invalid UTF-8, a split character, a byte-order mark), decode as TextDecoder does', () => {
    const piece = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 8 }).map((t) => Buffer.from(t, 'utf8')),
      fc.constantFrom(
        Buffer.from([0xef, 0xbb, 0xbf]), // U+FEFF
        Buffer.from([0xe2, 0x82]), // a character cut short
        Buffer.from([0xff, 0xc0, 0x80]), // never valid
        Buffer.from([0xf0, 0x9f, 0x98, 0x80]), // outside the BMP
        Buffer.from('\n'),
        Buffer.from('\r\n'),
      ),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.integer({ min: 0, max: 1000 }), (pieces, seed) => {
        const bytes = Buffer.concat(pieces);
        const cuts = fc.sample(cutsOf(bytes.length), { numRuns: 1, seed })[0];
        // One-shot TextDecoder (a leading BOM dropped, U+FFFD for what is invalid), split at LF.
        const lines = new TextDecoder('utf-8')
          .decode(bytes)
          .split(/\r\n|\r|\n/)
          .map((l) => l.trim())
          .filter((l) => l !== '');
        expect(feed(new NdjsonParser(), bytes, cuts).map((e) => e.data)).to.deep.equal(lines);
      }),
      { seed: 15, numRuns: 500 },
    );
  });

  it('SSE: a byte-order mark opening the stream is dropped, cut anywhere; one later is data', () => {
    const bytes = Buffer.from('\uFEFFdata: a\n\ndata: \uFEFFb\n\n', 'utf8');
    for (let cut = 0; cut <= bytes.length; cut++)
      expect(feed(new SseParser(), bytes, [cut])).to.deep.equal([{ data: 'a' }, { data: '\uFEFFb' }]);
  });

  it('NDJSON: any cut gives the same lines', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 1000 }),
        (values, seed) => {
          const bytes = Buffer.from(values.map((v) => JSON.stringify(v)).join('\n') + '\n', 'utf8');
          const cuts = fc.sample(cutsOf(bytes.length), { numRuns: 1, seed })[0];
          expect(feed(new NdjsonParser(), bytes, cuts).map((e) => e.data)).to.deep.equal(
            values.map((v) => JSON.stringify(v)),
          );
        },
      ),
      { seed: 15, numRuns: 200 },
    );
  });

  it('a line, an event or a frame over the limit throws a SizeLimitError, whatever the chunking', () => {
    const long = Buffer.alloc(10_000, 'a');
    expect(() => feed(new SseParser(4096), Buffer.concat([Buffer.from('data: '), long]), [100, 5000])).to.throw(
      SizeLimitError,
    );
    // Many short data lines in one event add up too.
    const lines = Buffer.from('data: aaaaaaaaaa\n'.repeat(1000));
    expect(() => feed(new SseParser(4096), lines, [])).to.throw(SizeLimitError);
    expect(() => feed(new NdjsonParser(4096), long, [3000])).to.throw(SizeLimitError);
    // The event-stream prelude announces the size: refused before the frame arrives.
    const frame = encodeEventMessage({ ':event-type': 'chunk', ':message-type': 'event' }, 'x'.repeat(10_000));
    expect(() => new AwsEventStreamParser(4096).push(frame.subarray(0, 12))).to.throw(SizeLimitError);
    const small = encodeEventMessage({ ':event-type': 'chunk', ':message-type': 'event' }, '{"a":1}');
    expect(
      feed(new AwsEventStreamParser(4096), Buffer.concat([small, small]), [5, 20, small.length + 3]),
    ).to.deep.equal([
      { event: 'chunk', data: '{"a":1}' },
      { event: 'chunk', data: '{"a":1}' },
    ]);
  });

  it('is linear: a 64 MB line fed in 64 KB pieces takes about as long per byte as a 4 MB one', () => {
    const piece = Buffer.alloc(64 * 1024, 'a');
    const time = (mb: number) => {
      const p = new SseParser(mb * 1024 * 1024 + 1024);
      p.push(Buffer.from('data: '));
      const t0 = performance.now();
      for (let i = 0; i < mb * 16; i++) p.push(piece);
      p.push(Buffer.from('\n\n'));
      return performance.now() - t0;
    };
    // The fastest of a few runs of each: one GC pause or a preempted millisecond in a ~2 ms run made the ratio of
    // single runs swing past 64 on a shared machine.
    const fastest = (mb: number, runs: number) => Math.min(...Array.from({ length: runs }, () => time(mb)));
    time(4);
    const small = Math.max(fastest(4, 7), 1);
    const big = fastest(64, 3);
    // 16x the bytes: a quadratic parser takes ~256x; allow generous noise for a shared machine.
    expect(big / small).to.be.below(64);
  });
});
