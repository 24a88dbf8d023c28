import { expect } from 'chai';
import { holdFrom } from '../../../plugins/guardrails/hold';

/** What a stream holds back of its text so far (the rest leaves now). */
const held = (buf: string, matches = true, words = 0) => buf.slice(holdFrom(buf, { matches, words, max: 512 }));

describe('guardrails: what a stream holds back', () => {
  it('without output checks: only an unclosed placeholder', () => {
    expect(held('Hello wor', false)).to.equal('');
    expect(held('see [EMA', false)).to.equal('[EMA');
    expect(held('see [EMAIL_1', false)).to.equal('[EMAIL_1');
    expect(held('see [EMAIL_1] ok', false)).to.equal('');
    expect(held('a [lowercase', false)).to.equal('');
  });

  it('with output checks: the last word, the groups of a number or an IBAN before it, a phrase, a key block', () => {
    expect(held('Hello')).to.equal('Hello');
    expect(held('Hello ')).to.equal('');
    expect(held('Hello!')).to.equal('');
    expect(held('say "hi')).to.equal('hi');
    expect(held('mail john.doe@exa')).to.equal('john.doe@exa');
    expect(held('call +1 415 ')).to.equal('+1 415 ');
    expect(held('IBAN DE89 3704 0044')).to.equal('IBAN DE89 3704 0044');
    expect(held('one two three four five', true, 2)).to.equal('three four five');
    expect(held('key -----BEGIN RSA PRIVATE KEY-----\nMIIE abc def ')).to.match(/^-----BEGIN/);
    expect(held('x'.repeat(600))).to.have.length(512);
  });
});
