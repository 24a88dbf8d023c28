import type OpenAI from 'openai';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY } from '../helpers/accounts';
import { keyedClient } from '../helpers/sdk';

export const CHAT_MODEL = 'mock/gpt-4o-mini';
export const EMBED_MODEL = 'mock/embed';
export const SLOW_MODEL = 'mock/slow';

/** The whole metered chain on the mock provider: a chat model and an embeddings-only model. */
export function operationsConfig(extra: Record<string, unknown> = {}) {
  const base = testConfig({}, {});
  const embed = {
    id: EMBED_MODEL,
    endpoints: ['embeddings'],
    pricing: { prompt: 0.000001, completion: 0 },
    deployments: [{ provider: 'mock', model: 'embed-small' }],
  };
  const slow = {
    id: SLOW_MODEL,
    pricing: { prompt: 0.000001, completion: 0.000002 },
    deployments: [{ provider: 'mock', model: 'slow', options: { chunk_size: 1, chunk_delay_ms: 25 } }],
  };
  return testConfig(
    {
      models: [...base.models, embed, slow],
      plugins: ['metrics', 'auth', 'params', 'fallback', 'credit', 'storage', 'routing'],
      ...extra,
    },
    { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  );
}

/** A gateway on operationsConfig(), a key with 10 credits, and the openai SDK using it. */
export async function startOperationsSdk(): Promise<{ gw: TestGateway; key: string; client: OpenAI }> {
  const gw = await startTestGateway(operationsConfig());
  try {
    const { key, client } = await keyedClient(gw, { credits: 10 });
    return { gw, key, client };
  } catch (e) {
    await gw.stop();
    throw e;
  }
}
