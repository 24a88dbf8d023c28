import { testConfig } from './gateway';
import { ADMIN_KEY } from './accounts';
import { countPromptTokens } from '../../src/tokens/count';
import type { ChatRequest } from '../../src/types/openai';
import { costBound } from '../../plugins/credit/bound';
import { requestTokenBound } from '../../src/tokens/bound';

export const MODEL = 'mock/gpt-4o-mini'; // prompt 1000 nano/token, completion 2000 nano/token
export const slow = {
  id: 'mock/slow',
  owned_by: 'mock',
  pricing: { prompt: 0.000001, completion: 0.000002 },
  deployments: [{ provider: 'mock', model: 'slow', options: { chunk_size: 1, chunk_delay_ms: 25 } }],
};

export function creditConfig(extra: Record<string, unknown> = {}) {
  const base = testConfig({}, {});
  return testConfig(
    { models: [...base.models, slow], plugins: ['auth', 'credit', 'routing'], ...extra },
    { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  );
}

/**
 * A request with a known real cost (the mock answer is cut at max_tokens) and its
 * reservation (the credit plugin's bound for it on the mock provider, at least the cost).
 */
export function exactRequest(): { body: ChatRequest; cost: number; reserve: number } {
  const body: ChatRequest = {
    model: MODEL,
    max_tokens: 3,
    messages: [{ role: 'user', content: 'count the words in this rather long sentence please' }],
  };
  const model = {
    id: MODEL,
    owned_by: 'mock',
    created: 0,
    context_length: 128000,
    pricing: { prompt: 0.000001, completion: 0.000002 },
    deployments: [],
  };
  const reserve = costBound({ prompt: 1000, completion: 2000, request: 0 }, requestTokenBound(body, model, 'mock'));
  return { body, cost: countPromptTokens(body) * 1000 + 3 * 2000, reserve };
}
