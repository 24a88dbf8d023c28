import { expect } from 'chai';
import { backoffMs } from '../../../plugins/routing/backoff';
import { errors } from '../../../src/errors';

describe('routing: the wait before a retry', () => {
  it('backoff grows exponentially with jitter, capped; Retry-After wins up to its cap', () => {
    const b = { baseMs: 100, maxMs: 1000, retryAfterMaxMs: 2000 };
    expect(backoffMs(1, undefined, b, () => 0)).to.equal(50);
    expect(backoffMs(3, undefined, b, () => 1)).to.equal(400);
    expect(backoffMs(10, undefined, b, () => 1)).to.equal(1000);
    const e = errors.upstreamTimeout('p');
    Object.assign(e, { retryAfter: 5 });
    expect(backoffMs(1, e, b)).to.equal(2000);
  });
});
