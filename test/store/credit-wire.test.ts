import { expect } from 'chai';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { deserialize, serialize } from 'node:v8';
import type { SettleArgs } from '../../plugins/credit/store/settle';
import type { Generation } from '../../src/store/generations';
import { decodePayload, encodePayload, jsonText } from '../../src/store/engine/redo-codec';
import { writeParams } from '../../src/store/request-batch';
import { holdWire, settleWire } from '../../plugins/credit/store/wire';
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
    attempts: orNull(text),
    cache: orNull(fc.constantFrom('hit' as const, 'miss' as const, 'bypass' as const)),
    cacheEntry: orNull(text),
    cacheSimilarity: orNull(ms),
    variant: orNull(text),
    insured: fc.boolean(),
    guardrails: orNull(text),
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

  it('its own JSON text (ProcWire.json) gives the worker all it reads, or is null and the general codec decides', () => {
    const body = fc.oneof(
      fc.jsonValue(),
      fc.constant(undefined),
      fc.constant({ big: 1n }),
      fc.constant({ toJSON: () => undefined }),
      fc.constant(Object.assign([1], { named: 2 })),
    );
    const withJson = fc.tuple(settle, fc.array(body, { maxLength: 2 })).map(([args, values]) => ({
      ...args,
      writes: [
        ...args.writes,
        ...values.map((value, at) => ({ sql: 'INSERT', params: ['id', null], json: { at, value } })),
      ],
    }));
    fc.assert(
      fc.property(withJson, (args) => {
        const packed = settleWire.pack(args);
        const text = settleWire.json!(packed);
        if (text === null) return true;
        const back = settleWire.unpack(JSON.parse(text) as unknown[]);
        // What the worker runs: every field as sent, each write with the parameters it would have had.
        expect({ ...back, writes: [] }).to.deep.equal({ ...args, writes: [] });
        expect(back.writes.map(writeParams)).to.deep.equal(args.writes.map(writeParams));
        return true;
      }),
      { numRuns: 1000 },
    );
  });

  it("its own JSON text is the general codec's for a settlement as the gateway makes it, and null where JSON fails", () => {
    const body = { id: 'resp_1', output: [{ type: 'message', content: [{ text: 'Hi \u2028 \ud800' }] }], n: 1.5 };
    const args: SettleArgs = {
      reservationId: 'rsv_1',
      charge: 30000,
      generation: generationRecord({
        id: 'chatcmpl-1',
        accountId: 'acct_1',
        metadata: JSON.parse('{"team":"a","__proto__":"x"}') as Record<string, unknown>,
      }),
      overrun: { amount: 5, reason: 'usage_over_reservation' },
      now: 1795614230342,
      writes: [
        {
          sql: 'INSERT INTO responses (id, body) VALUES (?, ?)',
          params: ['resp_1', null],
          json: { at: 1, value: body },
        },
      ],
      made: { id: 'rsv_1', accountId: 'acct_1', keyHash: null, amount: 182000, createdAt: 1795614230340, book: 'b' },
    };
    expect(settleWire.json!(settleWire.pack(args))).to.equal(jsonText(settleWire.pack(args)));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [
      { ...args, charge: NaN },
      { ...args, now: -0 },
      { ...args, writes: [{ sql: 'UPDATE t SET n = ?', params: [2n ** 70n] }] },
      { ...args, writes: [{ ...args.writes[0], json: { at: 1, value: cyclic } }] },
      { ...args, writes: [{ ...args.writes[0], json: { at: 1, value: { toJSON: () => 'x' } } }] },
      { ...args, generation: generationRecord({ id: 'g', accountId: 'a', metadata: { nested: { a: 1 } } }) },
    ])
      expect(settleWire.json!(settleWire.pack(bad))).to.equal(null);
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
