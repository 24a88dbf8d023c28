import OpenAI from 'openai';
import type { GatewayConfig } from '../../src/config/types';
import { makeAccountKey } from './accounts';
import { startTestGateway, type TestGateway } from './gateway';

/** The openai SDK pointed at a gateway, without retries (a test sees every answer as it came). */
export function sdkClient(gw: { url: string }, apiKey = 'unused'): OpenAI {
  return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
}

/** A new account with `credits` and a key on it (see makeAccountKey), and the openai SDK using that key. */
export async function keyedClient(
  gw: { url: string },
  opts: Parameters<typeof makeAccountKey>[1] = {},
): Promise<{ key: string; accountId: string; hash: string; client: OpenAI }> {
  const k = await makeAccountKey(gw, opts);
  return { ...k, client: sdkClient(gw, k.key) };
}

/** A test gateway (on `config`, testConfig() when not given) and the openai SDK on it, with no key. */
export async function startSdkGateway(config?: GatewayConfig): Promise<{ gw: TestGateway; client: OpenAI }> {
  const gw = await startTestGateway(config);
  return { gw, client: sdkClient(gw) };
}
