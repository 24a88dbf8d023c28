import { testConfig } from './gateway';
import { ADMIN_KEY } from './accounts';
import { countPromptTokens } from '../../src/tokens/count';
import type { ChatRequest } from '../../src/types/openai';

export const MODEL = 'mock/gpt-4o-mini'; // prompt 1000 nano/token, completion 2000 nano/token
export const slow = { id: 'mock/slow', owned_by: 'mock', pricing: { prompt: 0.000001, completion: 0.000002 }, deployments: [{ provider: 'mock', model: 'slow', options: { chunk_size: 1, chunk_delay_ms: 25 } }] };

export function creditConfig(extra: Record<string, unknown> = {}) {
  const base = testConfig({}, {});
  return testConfig({ models: [...base.models, slow], plugins: ['auth', 'credit', 'routing'], ...extra }, { GATEWAY_ADMIN_KEY: ADMIN_KEY });
}

/** A request whose real cost equals its reservation: the mock answer is cut at max_tokens. */
export function exactRequest(): { body: ChatRequest; cost: number } {
  const body: ChatRequest = { model: MODEL, max_tokens: 3, messages: [{ role: 'user', content: 'count the words in this rather long sentence please' }] };
  return { body, cost: countPromptTokens(body) * 1000 + 3 * 2000 };
}

