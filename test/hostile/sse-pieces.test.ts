import { expect } from 'chai';
import fc from 'fast-check';
import { NdjsonParser, SseParser, type EventParser } from '../../src/transport/sse';
import { SizeLimitError } from '../../src/transport/limits';
import type { UpstreamEvent } from '../../src/providers/types';

/**
 * The pieces of one socket read (one per chunk of the chunked encoding) are parsed together (pushPieces: copied into
 * one buffer, decoded once). Property: for any bytes, valid UTF-8 or not (a character split between pieces or reads,
 * a stray continuation byte, a truncated sequence, a byte-order mark), cut into pieces and the pieces into reads
 * anywhere, the events and the size errors are those of a push a piece: what the gateway promised of invalid UTF-8
 * before (U+FFFD in its place, docs/decisions/0065-text-runs.md) still holds, and no read sees another's bytes.
 */
function run(p: EventParser, reads: Uint8Array[][], together: boolean): UpstreamEvent[] | string {
  const out: UpstreamEvent[] = [];
  try {
    for (const pieces of reads) {
      if (together) p.pushPieces!(pieces, out);
      else for (const piece of pieces) p.push(piece, out);
    }
    return p.end(out);
  } catch (e) {
    if (e instanceof SizeLimitError) return e.what;
    throw e;
  }
}

/** Bytes of SSE events whose data holds any UTF-8, and bytes that are not UTF-8 at all. */
const chunkBytes = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }).map((s) => Buffer.from(`data: {"t":"${s}"}\n\n`, 'utf8')),
  fc.constantFrom(
    Buffer.from([0xe2, 0x82]), // a three-byte character cut short
    Buffer.from([0x80, 0xbf]), // continuation bytes with no lead
    Buffer.from([0xf0, 0x9f, 0x98]), // four bytes cut short
    Buffer.from([0xc3]),
    Buffer.from([0xa9, 0x0a, 0x0a]),
    Buffer.from([0xef, 0xbb, 0xbf]), // a byte-order mark
    Buffer.from('event: e\r\n'),
    Buffer.from('data: x\r\n\r\n'),
    Buffer.from('\n\n'),
  ),
);

/** `bytes` cut at `cuts` into pieces, and the pieces into reads at every `every`-th piece. */
function split(bytes: Buffer, cuts: number[], every: number): Uint8Array[][] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    pieces.push(bytes.subarray(from, c));
    from = c;
  }
  const reads: Uint8Array[][] = [];
  for (let i = 0; i < pieces.length; i += every) reads.push(pieces.slice(i, i + every));
  return reads;
}

describe('SSE and NDJSON: the pieces of a read parsed together give what a push a piece gives', () => {
  it('for any bytes, cuts and reads (SSE, then NDJSON)', () => {
    fc.assert(
      fc.property(
        fc.array(chunkBytes, { maxLength: 12 }),
        fc.array(fc.nat(400), { maxLength: 12 }),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(1 << 20, 16, 40),
        (chunks, cuts, every, max) => {
          const reads = split(Buffer.concat(chunks), cuts, every);
          expect(run(new SseParser(max), reads, true)).to.deep.equal(run(new SseParser(max), reads, false));
          expect(run(new NdjsonParser(max), reads, true)).to.deep.equal(run(new NdjsonParser(max), reads, false));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('a read far larger than any before, then small ones: each read sees only its own bytes', () => {
    const big = Buffer.from(`data: ${'x'.repeat(200_000)}\n\n`);
    const reads = [[big.subarray(0, 100_000), big.subarray(100_000)], [Buffer.from('data: a\n\n')]];
    const got = run(new SseParser(1 << 20), reads, true) as UpstreamEvent[];
    expect(got.map((e) => e.data.length)).to.deep.equal([200_000, 1]);
    expect(got[1].data).to.equal('a');
  });
});
