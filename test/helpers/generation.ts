import type { Generation } from '../../src/store/generations';

/** A generation record for store tests and the store bench: a plain completed one, with `fields` on top. */
export function generationRecord(fields: Pick<Generation, 'id' | 'accountId'> & Partial<Generation>): Generation {
  return {
    keyHash: null,
    model: 'm',
    provider: 'mock',
    deployment: 'x',
    promptTokens: 10,
    completionTokens: 20,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    cost: 10,
    latencyMs: 1,
    ttftMs: null,
    finishReason: 'stop',
    streamed: false,
    cancelled: false,
    status: 'completed',
    errorCode: null,
    appReferer: null,
    appTitle: null,
    user: null,
    metadata: null,
    createdAt: Date.now(),
    ...fields,
  };
}
