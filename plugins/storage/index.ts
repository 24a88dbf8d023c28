/**
 * @module
 * The storage plugin: stores every completion (plain or streamed, any provider) as a response that
 * GET /responses/{id} returns (routes.ts), unless the request says `store: false` or the model is excluded
 * (middleware.ts). Streams are assembled from their chunks as they pass (assemble.ts) and stored when they end; a
 * failed write never breaks the answer: it is counted and logged (writer.ts). Expired responses are swept in small
 * batches (retention.ts). See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth
 *   - credit
 *   - storage:
 *       ttl_seconds: 2592000          # 30 days; 0 keeps responses until deleted
 *       disabled_models: []           # never stored
 *       no_content_models: []         # stored without content (status and usage only), for privacy
 *       sweep_interval_ms: 60000      # expired responses are deleted in the background...
 *       sweep_batch: 500              # ...in batches this small
 *   - routing
 * ```
 */
import { definePlugin, STORED_RESPONSES, SweepGate } from '../../src/plugin';
import { storageMetrics } from './metrics';
import { storageMiddleware } from './middleware';
import { startRetention } from './retention';
import { registerResponseRoutes } from './routes';
import { configSchema, type StorageConfig } from './schema';
import { responseMigrations } from './store/migrations';
import { ResponseRepo } from './store/repo';
import { ResponseWriter } from './writer';

export default definePlugin<StorageConfig>({
  name: 'storage',
  description: 'Stored responses: GET and DELETE /responses/{id}.',
  store: { migrations: responseMigrations },
  configSchema,
  setup(config, services) {
    const { writeErrors } = storageMetrics(services.metrics);
    const responses = new ResponseRepo(services.store.db);
    services.shared.set(STORED_RESPONSES, responses);
    registerResponseRoutes(services.router, responses, services.shared);
    const gate = new SweepGate();
    const sweeper = startRetention(config, responses, gate, services.logger);
    const noContent = new Set(config.no_content_models);
    const writer = new ResponseWriter({
      responses,
      gate,
      writeErrors,
      logger: services.logger,
      ttlSeconds: config.ttl_seconds,
      noContent,
    });
    return {
      middleware: storageMiddleware({ disabled: new Set(config.disabled_models), noContent, writer }),
      close() {
        clearInterval(sweeper);
      },
    };
  },
});
