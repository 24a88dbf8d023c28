import OpenAI from 'openai';
import { makeAccountKey } from './accounts';

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
