import { expect } from 'chai';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { deserialize, serialize } from 'node:v8';
import type { SettleArgs } from '../../src/store/credit-settle';
import type { Generation } from '../../src/store/generations';
import { decodePayload, encodePayload } from '../../src/store/redo-codec';
import { holdWire, settleWire } from '../../src/store/credit-wire';
import { generationRecord } from '../helpers/generation';

const text = fc.string({ maxLength: 12 });
const orNull = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
const count = fc.nat();
const ms = fc.double({ min: 0, max: 1e6, noNaN: true });

/** Objects as the gateway makes them (fast-check also makes some without a prototype). */
const plain = { noNullPrototype: true };

const generation: fc.Arbitrary<Generation> = fc.record(
  {
    id: text,
    accountId: text,
    keyHash: orNull(text),
    model: text,
    provider: orNull(text),
    deployment: orNull(text),
    promptTokens: count,
    completionTokens: count,
    cachedTokens: count,
    cacheWriteTokens: count,
    reasoningTokens: count,
    cost: count,
    latencyMs: orNull(ms),
    ttftMs: orNull(ms),
    finishReason: orNull(text),
    streamed: fc.boolean(),
    cancelled: fc.boolean(),
    status: fc.constantFrom('completed' as const, 'incomplete' as const, 'error' as const),
    errorCode: orNull(text),
    appReferer: orNull(text),
    appTitle: orNull(text),
    user: orNull(text),
    metadata: orNull(fc.dictionary(text, fc.jsonValue(), plain)),
    createdAt: count,
  },
  plain,
);

/** Any settlement's arguments, as credit-repo.ts makes them. */
const settle: fc.Arbitrary<SettleArgs> = fc.record(
  {
    reservationId: text,
    charge: fc.oneof(count, fc.constant(NaN), fc.constant(-1)),
    generation: orNull(generation),
    overrun: orNull(fc.record({ amount: count, reason: text }, plain)),
    now: count,
    writes: fc.array(
      fc.record(
        {
          sql: fc.oneof(text, fc.record({ sqlite: text, postgres: text }, plain)),
          params: fc.array(fc.oneof(text, count, fc.boolean(), fc.constant(null))),
        },
        plain,
      ),
      { maxLength: 3 },
    ),
    made: orNull(
      fc.record(
        { id: text, accountId: text, keyHash: orNull(text), amount: count, createdAt: count, book: text },
        plain,
      ),
    ),
  },
  plain,
);

const hold = fc.record({ id: text, accountId: text, keyHash: orNull(text), amount: count, createdAt: count }, plain);

describe("The credit procedures' packed arguments (the worker's messages and redo log)", () => {
  it('a hold comes back whole', () => {
    fc.assert(
      fc.property(hold, (h) =>
        isDeepStrictEqual(holdWire.unpack(deserialize(serialize(holdWire.pack(h))) as unknown[]), h),
      ),
    );
  });

  it('unpack gives back every field of what was packed, after a structured clone as after the redo codec', () => {
    fc.assert(
      fc.property(settle, (args) => {
        const packed = settleWire.pack(args);
        expect(Array.isArray(packed)).to.equal(true);
        expect(settleWire.unpack(deserialize(serialize(packed)) as unknown[])).to.deep.equal(args);
        // The redo codec keeps what JSON cannot say exactly (NaN) in node:v8's form: either way, the same comes back.
        const logged = decodePayload(encodePayload({ seq: 1, entries: [{ proc: 'credit.settle', packed }] })) as {
          entries: Array<{ packed: unknown[] }>;
        };
        return isDeepStrictEqual(settleWire.unpack(logged.entries[0].packed), args);
      }),
      { numRuns: 500 },
    );
  });

  it("sends a settlement in about half of its object's bytes (a structured clone writes every key)", () => {
    const hold = { id: 'rsv_pk_Abh0XBzF-cOW2G13WiiEe', accountId: 'acct_7hAMJCM6ZYAGDSTyZVV77HtU', amount: 182000 };
    const keyHash = '5e5b247aec9fc21c4aaa8d1fc66d09a125f5dff4863e2f5b599a837db47be2b3';
    const args: SettleArgs = {
      reservationId: hold.id,
      charge: 30000,
      generation: generationRecord({ id: 'chatcmpl-0VbzaJoBAA9su_B24OaoehBH', accountId: hold.accountId, keyHash }),
      overrun: null,
      now: 1795614230342,
      writes: [],
      made: { ...hold, keyHash, createdAt: 1795614230340, book: 'book_8udOgoaKTESfaZvUBDSJ5LOo' },
    };
    expect(serialize(settleWire.pack(args)).length).to.be.below(serialize(args).length * 0.6);
  });
});
