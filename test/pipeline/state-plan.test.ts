import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { createState, fixPlan } from '../../src/pipeline/request-state';
import type { GatewayContext } from '../../src/pipeline/plugin';
import type { AttemptPlan, GatewayRequestOptions, GatewayState } from '../../src/pipeline/state';
import type { ModelConfig } from '../../src/config/types';
import type { ChatRequest } from '../../src/types/openai';

const plan = (n: number) => ({ attempts: [], backoff: { baseMs: n, maxMs: n, retryAfterMaxMs: n } }) as AttemptPlan;

describe("the request state's attempt plan", () => {
  it('is written freely until credit fixes it; after that an assignment throws and the plan stays', () => {
    const ctx = { res: new EventEmitter(), state: { requestId: 'req_1' } } as unknown as GatewayContext;
    const s = createState(ctx, {
      startedAt: 0n,
      operation: 'chat',
      request: { model: 'm', messages: [] } as unknown as ChatRequest,
      options: {} as GatewayRequestOptions,
      model: { id: 'm' } as ModelConfig,
    });
    expect(s.plan).to.equal(undefined);
    const fallback = plan(1);
    s.plan = fallback; // the fallback plugin writes it
    expect(s.plan).to.equal(fallback);
    const reserved = plan(2);
    fixPlan(s, reserved);
    expect(s.plan).to.equal(reserved);
    expect(() => (s.plan = plan(3)), 'a plugin after credit').to.throw(TypeError);
    expect(s.plan).to.equal(reserved);
  });

  it('is fixed the same way on a state the gateway did not make (a read-only property)', () => {
    const s = {} as GatewayState;
    const reserved = plan(2);
    fixPlan(s, reserved);
    expect(() => (s.plan = plan(3))).to.throw(TypeError);
    expect(s.plan).to.equal(reserved);
  });
});
