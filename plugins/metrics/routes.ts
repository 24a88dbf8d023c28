/**
 * @module
 * `GET /metrics`: on the gateway's router, or alone on a port of its own; behind a bearer token when one is set.
 */
import { createServer, type Server } from 'node:http';
import type Router from '@koa/router';
import { constantTimeEqual, errors, type Registry } from '../../src/plugin';
import type { MetricsConfig } from './schema';

/**
 * Serves the registry's text where the config says. Returns the separate server to close, when there is one.
 */
export async function serveMetrics(
  registry: Registry,
  config: Readonly<MetricsConfig>,
  router: Router,
  host: string,
): Promise<Server | undefined> {
  const authorized = (header: string | undefined) =>
    !config.token || (header !== undefined && constantTimeEqual(header, `Bearer ${config.token}`));
  if (config.port === undefined) {
    router.get('/metrics', async (ctx) => {
      if (!authorized(ctx.get('authorization') || undefined))
        throw errors.unauthorized('metrics_token_required', 'GET /metrics needs the metrics bearer token');
      ctx.type = registry.contentType;
      ctx.body = await registry.metrics();
    });
    return undefined;
  }
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    if (!authorized(req.headers.authorization)) return void res.writeHead(401).end();
    void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text));
  });
  await new Promise<void>((r) => server.listen(config.port, host, () => r()));
  return server;
}
