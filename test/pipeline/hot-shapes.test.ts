import { execFileSync } from 'node:child_process';
import { expect } from 'chai';

describe('objects built on every request keep one map (V8 hidden class)', () => {
  it('the settlement hold, its unpacked copy, the OpenAI request body and stream translators, once optimized', () => {
    const out = execFileSync(
      process.execPath,
      ['--allow-natives-syntax', '--require', 'tsx/cjs', 'test/fixtures/hot-shapes.ts'],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(out)).to.deep.equal({
      madeHold: true,
      unpackedMade: true,
      plainBody: true,
      streamBody: true,
      openAITranslator: true,
      compatibleTranslator: true,
      otherTranslators: true,
    });
  });
});
