import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { newCompletionId, orderedId } from '../../src/ids';

describe('ids', () => {
  it('ordered ids sort by the millisecond they were made in, and never repeat', async () => {
    const made: string[] = [];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 200; i++) made.push(orderedId('led_'));
      await sleep(3);
    }
    expect(new Set(made).size).to.equal(made.length);
    const firstOfRound = made.filter((_, i) => i % 200 === 0);
    expect([...firstOfRound].sort()).to.deep.equal(firstOfRound);
    expect(made.every((id) => /^led_[0-9A-Za-z]{8}[\w-]{16}$/.test(id))).to.equal(true);
    // The time prefix reads back as the millisecond.
    const t = [...made[0].slice(4, 12)].reduce(
      (n, c) => n * 62 + '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.indexOf(c),
      0,
    );
    expect(Math.abs(t - Date.now())).to.be.below(60_000);
  });

  it("completion ids keep OpenAI's form: chatcmpl- and 24 characters", () => {
    expect(newCompletionId()).to.match(/^chatcmpl-[\w-]{24}$/);
  });
});
