/**
 * Test helpers for plugin authors: `import { startGateway, MockUpstream } from 'model-gateway/testing'`.
 * A real gateway on a loopback port with a config given as a plain object (the YAML's
 * shape), its logs captured; and a loopback upstream that records what reached it.
 */
import { Writable } from 'node:stream';
import { fromObject } from '../config/load';
import { createLogger } from '../logger';
import { startGateway as start, type RunningGateway } from '../start';

export {
  MockUpstream,
  openaiFixtures,
  sendJson,
  writeSse,
  type RecordedRequest,
  type UpstreamHandler,
} from './mock-upstream';

export interface TestGatewayOptions {
  /** Environment for ${VAR} interpolation (default: none). */
  env?: NodeJS.ProcessEnv;
  /** Where relative paths in the config (plugins, store) resolve; default: the current directory. */
  baseDir?: string;
}

export interface StartedGateway extends RunningGateway {
  /** Log lines the gateway wrote (JSON strings), for asserting on logs. */
  logs: string[];
}

/** Start a gateway on 127.0.0.1, port 0, memory store and silent-ish logs unless the config says otherwise. */
export async function startGateway(
  config: Record<string, unknown>,
  opts: TestGatewayOptions = {},
): Promise<StartedGateway> {
  const server = { host: '127.0.0.1', port: 0, ...(config.server as Record<string, unknown> | undefined) };
  const parsed = fromObject(
    { store: { driver: 'memory' }, ...config, server },
    { env: opts.env ?? {}, baseDir: opts.baseDir ?? process.cwd() },
  );
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  const gw = await start(parsed, { logger: createLogger(parsed.server.log_level, sink), port: 0 });
  return Object.assign(gw, { logs });
}
