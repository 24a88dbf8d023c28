import { expect } from 'chai';
import fc from 'fast-check';
import { MemoryCounterStore } from '../../../plugins/limits/memory-store';
import { compileAllowlist } from '../../../plugins/limits/model-match';
import { resetText } from '../../../plugins/limits/headers';

describe('limits: counters and matchers', () => {
  it('memory counters never admit more than rpm requests or tpm tokens in any trailing window, and refuse only when full', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 50, max: 400 }),
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 400 }), tokens: fc.integer({ min: 1, max: 120 }) }), {
          maxLength: 120,
        }),
        async (rpm, tpm, ops) => {
          let now = 0;
          const windowMs = 1000;
          const store = new MemoryCounterStore(windowMs, 10_000, () => now);
          const scopes = [{ id: 'k:x', rpm, tpm, concurrency: 0 }];
          const admitted: Array<{ t: number; tokens: number }> = [];
          let i = 0;
          for (const op of ops) {
            now += op.dt;
            const a = await store.admit({ id: `r${i++}`, tokens: op.tokens, scopes });
            const inWindow = admitted.filter((x) => x.t > now - windowMs);
            const used = inWindow.reduce((s, x) => s + x.tokens, 0);
            if (a.ok) {
              admitted.push({ t: now, tokens: op.tokens });
              expect(inWindow.length + 1).to.be.at.most(rpm);
              expect(used + op.tokens).to.be.at.most(tpm);
            } else {
              // Refused only when the request really does not fit; the retry hint is within the window.
              expect(inWindow.length + 1 > rpm || used + op.tokens > tpm).to.equal(true);
              expect(a.retryAfterMs).to.be.within(1, windowMs);
            }
          }
          await store.close();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('memory counters: concurrency slots come back on finish or when the lease runs out; settling changes the token count', async () => {
    let now = 0;
    const store = new MemoryCounterStore(60_000, 5000, () => now);
    const scopes = [{ id: 'k:y', rpm: 0, tpm: 1000, concurrency: 2 }];
    expect((await store.admit({ id: 'a', tokens: 400, scopes })).ok).to.equal(true);
    expect((await store.admit({ id: 'b', tokens: 400, scopes })).ok).to.equal(true);
    const third = await store.admit({ id: 'c', tokens: 100, scopes });
    expect(third.ok === false && third.dimension).to.equal('concurrency');
    await store.finish('a', scopes, 50);
    const fourth = await store.admit({ id: 'd', tokens: 500, scopes });
    expect(fourth.ok).to.equal(true); // 50 + 400 + 500 <= 1000 after settling a to 50
    expect(fourth.ok && fourth.usage[0].tokens).to.equal(950);
    now += 5001; // b and d never finished: their leases run out
    expect((await store.admit({ id: 'e', tokens: 10, scopes })).ok).to.equal(true);
    await store.close();
  });

  it('allowlists: exact ids and globs; null allows all, [] none', () => {
    const p = compileAllowlist(['anthropic/*', 'openai/gpt-4o', '*-mini']);
    expect(['anthropic/claude-3', 'anthropic/x/y', 'openai/gpt-4o', 'mock/gpt-4o-mini'].every(p)).to.equal(true);
    expect(['openai/gpt-4o-2024', 'anthropicx/claude', 'mock/gpt-4o', 'anthropic'].some(p)).to.equal(false);
    expect(compileAllowlist(['a.b/*'])('aXb/c')).to.equal(false);
    expect(compileAllowlist(null)('anything')).to.equal(true);
    expect(compileAllowlist([])('anything')).to.equal(false);
  });

  it("reset durations read like OpenAI's", () => {
    expect([0, 250, 1000, 1001, 59_000, 60_000, 360_000, 3_723_000].map(resetText)).to.deep.equal([
      '0ms',
      '250ms',
      '1s',
      '2s',
      '59s',
      '1m0s',
      '6m0s',
      '1h2m3s',
    ]);
  });
});
