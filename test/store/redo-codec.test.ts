import { expect } from 'chai';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { deserialize, serialize, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePayload, encodePayload } from '../../src/store/engine/redo-codec';
import { frameRecord, readRecords, writeAllv } from '../../src/store/engine/redo-log';
import { settleWire } from '../../plugins/credit/store/wire';
import { generationRecord } from '../helpers/generation';

/** A full garbage collection (the flag exposes gc to contexts made after it is set). */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/**
 * A payload left to node:v8 is node:v8's own bytes (compared as bytes: an invalid Date never equals itself); one
 * written as JSON reads back as node:v8's round trip would.
 */
function roundTripsAsV8(v: unknown): boolean {
  const payload = encodePayload(v);
  if (payload[0] === 0xff) return payload.equals(serialize(v));
  return isDeepStrictEqual(decodePayload(payload), deserialize(serialize(v)));
}

/** What a settlement's redo record holds (src/store/credit.ts: settleProc's arguments, packed by its wire form). */
function settlementRecord(seq: number): unknown {
  return {
    seq,
    entries: [
      {
        proc: 'credit.settle',
        packed: settleWire.pack({
          reservationId: 'rsv_abc',
          charge: 1234,
          // metadata as a client's JSON makes it: an own "__proto__" key (a literal's would set the prototype)
          generation: generationRecord({
            id: 'chatcmpl-1',
            accountId: 'acc',
            metadata: JSON.parse('{"team":"a","__proto__":"x"}') as Record<string, unknown>,
            latencyMs: 1.5,
            createdAt: 1_700_000_000_000,
          }),
          overrun: null,
          now: 1_700_000_000_000,
          writes: [{ sql: 'INSERT INTO responses (id, body) VALUES (?, ?)', params: ['resp_1', '{"a":"\\ud800"}'] }],
          made: { id: 'rsv_abc', accountId: 'acc', keyHash: null, amount: 5000, createdAt: 1, book: 'book_1' },
        }),
      },
    ],
  };
}

/** Encode `n` settlement records, and give back weak references to them (no frame of the caller holds one). */
function encodeRecords(n: number): Array<WeakRef<object>> {
  const refs: Array<WeakRef<object>> = [];
  for (let i = 0; i < n; i++) {
    const r = settlementRecord(i) as object;
    refs.push(new WeakRef(r));
    encodePayload(r);
  }
  return refs;
}

describe('SQLite redo log payloads: JSON where exact, node:v8 otherwise', () => {
  it('gives back what node:v8 gives back, for any value it can serialize', () => {
    const value = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withSparseArray: true,
      withTypedArray: true,
      withObjectString: true,
    });
    fc.assert(fc.property(value, roundTripsAsV8), { numRuns: 2000 });
    const sparse = [1, 2, 3];
    delete sparse[1];
    const named = Object.assign([1], { extra: 2 });
    const lone = { s: '\ud800x\udfff', line: '\u2028', tiny: 5e-324 }; // lone surrogates, JSON's own escapes
    for (const v of [
      -0,
      NaN,
      Infinity,
      sparse,
      named,
      [undefined],
      { a: undefined },
      10n,
      new Uint8Array([1, 2]),
      lone,
    ])
      expect(roundTripsAsV8(v), String(v)).to.equal(true);
  });

  it("writes a settlement's record as JSON, and one with a bigint parameter as node:v8 does", () => {
    const json = encodePayload(settlementRecord(7));
    expect(String.fromCharCode(json[0])).to.equal('{');
    const back = decodePayload(json) as { entries: Array<{ packed: unknown[] }> };
    expect(isDeepStrictEqual(back, settlementRecord(7))).to.equal(true);
    const metadata = settleWire.unpack(back.entries[0].packed).generation?.metadata ?? {};
    expect(Object.keys(metadata)).to.deep.equal(['team', '__proto__']);
    const big = { seq: 1, entries: [{ sql: 'UPDATE t SET n = ?', params: [2n ** 70n] }] };
    const v8 = encodePayload(big);
    expect(v8.equals(serialize(big))).to.equal(true);
    expect(decodePayload(v8)).to.deep.equal(big);
  });

  it('frames records read back in order after one writev of more buffers than one call takes, JSON and v8 alike', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-frames-'));
    try {
      const path = join(dir, 'log');
      const records = Array.from({ length: 2500 }, (_, i) => ({
        seq: i + 1,
        entries: [{ sql: 'UPDATE t SET v = ?', params: [i % 7 === 0 ? BigInt(i) : 'x'.repeat(i % 300)] }],
      }));
      const fd = openSync(path, 'a');
      try {
        writeAllv(fd, records.slice(0, 1).map(frameRecord));
        writeAllv(fd, records.slice(1).map(frameRecord));
      } finally {
        closeSync(fd);
      }
      expect(readRecords(path)).to.deep.equal(records);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps nothing it wrote alive: one collection frees the records (node:v8's serializer kept them all through it)", async () => {
    const refs = encodeRecords(50);
    await new Promise((r) => setImmediate(r)); // a WeakRef holds its target until the job that made it ends
    collect();
    expect(refs.filter((r) => r.deref() !== undefined).length).to.equal(0);
  });
});
