import { fromObject } from '../../src/config/load';
import type { GatewayConfig } from '../../src/config/types';
import { createLogger } from '../../src/logger';
import { startGateway, type RunningGateway } from '../../src/start';
import type { Store } from '../../src/store/index';
import { Writable } from 'node:stream';

export interface TestGateway extends RunningGateway {
  /** Log lines the gateway wrote, parsed (for asserting on logs, e.g. that no secret appears). */
  logs: string[];
}

/** The model testConfig() serves: the mock provider's `mock-small`, priced like gpt-4o-mini. */
export const MOCK_MODEL = {
  id: 'mock/gpt-4o-mini',
  owned_by: 'mock',
  created: 1715367049,
  context_length: 128000,
  pricing: { prompt: 0.000001, completion: 0.000002 },
  deployments: [{ provider: 'mock', model: 'mock-small' }],
};

/** A config for tests: memory store, silent port 0, the mock provider and a model on it, unless overridden. */
export function testConfig(overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): GatewayConfig {
  const base: Record<string, unknown> = {
    server: { host: '127.0.0.1', port: 0, log_level: 'info', shutdown_grace_ms: 2000 },
    store: { driver: 'memory' },
    providers: [{ name: 'mock', type: 'mock' }],
    models: [MOCK_MODEL],
    plugins: ['routing'],
  };
  return fromObject({ ...base, ...overrides }, { env, baseDir: process.cwd() });
}

/** Start a real gateway on a loopback port; logs are captured in memory. */
export async function startTestGateway(
  config: GatewayConfig = testConfig(),
  opts: { store?: Store } = {},
): Promise<TestGateway> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  const logger = createLogger(config.server.log_level, sink);
  const gw = await startGateway(config, { logger, port: 0, ...(opts.store ? { store: opts.store } : {}) });
  return Object.assign(gw, { logs });
}

/** Parse an SSE body into its `data:` payloads (raw strings, `[DONE]` included). */
export function sseData(body: string): string[] {
  return body
    .split('\n\n')
    .filter((f) => f.length > 0)
    .map((f) => {
      if (!f.startsWith('data: ')) throw new Error(`not an SSE data frame: ${JSON.stringify(f)}`);
      return f.slice('data: '.length);
    });
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
