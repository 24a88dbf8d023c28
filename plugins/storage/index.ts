import {
  Counter,
  deferWrite,
  definePlugin,
  STORED_RESPONSES,
  SweepGate,
  type GatewayContext,
  type Usage,
} from '../../src/plugin';
import { StreamAssembler, partsOfCompletion, toResponse, type ChoiceParts } from './assemble';
import { ANONYMOUS, registerResponseRoutes } from './routes';
import { storeOperation } from './operations';
import { putStatement, ResponseRepo } from './store/repo';
import { responseMigrations } from './store/migrations';

export interface StorageConfig {
  /** Time to live of a stored response; 0 keeps them until deleted. */
  ttl_seconds: number;
  /** Models whose responses are never stored. */
  disabled_models: string[];
  /** Models whose responses are stored without content (usage and status only). */
  no_content_models: string[];
  sweep_interval_ms: number;
  sweep_batch: number;
}

/**
 * Stores every completion (plain or streamed, any provider) as a response that
 * GET /responses/{id} returns, unless the request says `store: false` or the model is
 * excluded. Streams are assembled from their chunks as they pass and stored when they end.
 * A failed write never breaks the answer: it is counted and logged.
 */
export default definePlugin<StorageConfig>({
  name: 'storage',
  description: 'Stored responses: GET and DELETE /responses/{id}.',
  store: { migrations: responseMigrations },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      ttl_seconds: { type: 'integer', minimum: 0, default: 30 * 86400 },
      disabled_models: { type: 'array', items: { type: 'string' }, default: [] },
      no_content_models: { type: 'array', items: { type: 'string' }, default: [] },
      sweep_interval_ms: { type: 'integer', minimum: 10, default: 60000 },
      sweep_batch: { type: 'integer', minimum: 1, maximum: 10000, default: 500 },
    },
  },
  setup(config, services) {
    const { store, logger } = services;
    const disabled = new Set(config.disabled_models);
    const noContent = new Set(config.no_content_models);
    const writeErrors = new Counter({
      name: 'gateway_storage_write_errors_total',
      help: 'Stored-response writes that failed',
      registers: [services.metrics],
    });
    const responses = new ResponseRepo(store.db);
    services.shared.set(STORED_RESPONSES, responses);
    registerResponseRoutes(services.router, responses, services.shared);

    // Retention: small batches on a timer, so a large backlog never stalls requests.
    // Rounds before the first stored response expires do nothing (an idle store stays idle).
    const gate = new SweepGate();
    let sweeping = false;
    const sweeper = setInterval(() => {
      if (sweeping || config.ttl_seconds === 0) return;
      sweeping = true;
      const now = Date.now();
      gate
        .round(
          now,
          config.sweep_batch,
          () => responses.deleteExpired(config.sweep_batch, now),
          () => responses.nextExpiry(),
        )
        .catch((e: unknown) => logger.error({ err: e }, 'response retention sweep failed'))
        .finally(() => (sweeping = false));
    }, config.sweep_interval_ms);
    sweeper.unref();

    async function save(
      ctx: GatewayContext,
      parts: ChoiceParts[],
      status: 'completed' | 'incomplete',
      usage: Usage | null,
    ): Promise<void> {
      await put(ctx, responseOf(ctx, parts, status, usage), status);
    }

    function responseOf(
      ctx: GatewayContext,
      parts: ChoiceParts[],
      status: 'completed' | 'incomplete',
      usage: Usage | null,
    ): Record<string, unknown> {
      const s = ctx.state.gateway;
      const id = s.completionId;
      return toResponse(parts, {
        id,
        model: s.model.id,
        createdAt: Date.now(),
        status,
        usage,
        withContent: !noContent.has(s.model.id),
      });
    }

    function recordOf(ctx: GatewayContext, body: Record<string, unknown>, status: string) {
      const s = ctx.state.gateway;
      const now = Date.now();
      return {
        id: s.completionId,
        accountId: s.principal?.accountId ?? ANONYMOUS,
        model: s.model.id,
        status,
        body,
        createdAt: now,
        expiresAt: config.ttl_seconds === 0 ? null : now + config.ttl_seconds * 1000,
      };
    }

    async function put(ctx: GatewayContext, body: Record<string, unknown>, status: string): Promise<void> {
      try {
        const r = recordOf(ctx, body, status);
        if (r.expiresAt !== null) gate.lower(r.expiresAt);
        // Into the request's one transaction when credit settles it; else committed here.
        if (!deferWrite(ctx.state.gateway.extensions, putStatement(r))) await responses.put(r);
      } catch (e) {
        writeErrors.inc();
        logger.error({ err: e, requestId: ctx.state.gateway.requestId }, 'storing the response failed');
      }
    }

    return {
      async middleware(ctx, next) {
        const s = ctx.state.gateway;
        const wanted = s.options.store !== false && !disabled.has(s.model.id);
        if (s.operation !== 'chat')
          return storeOperation(
            s,
            wanted && s.operation === 'responses',
            noContent.has(s.model.id),
            (body, status) => put(ctx, body, status),
            next,
          );
        await next();
        if (!wanted || !s.result || s.result.kind === 'embeddings') return;
        if (s.result.kind === 'completion') {
          const body = s.result.body;
          const stored = () => responseOf(ctx, partsOfCompletion(body), 'completed', body.usage ?? null);
          // With credit in the chain: in its settlement's transaction, built when it settles. Without:
          // once the whole chain has returned. Either way, after the plugins inside those points edited it.
          if (deferWrite(s.extensions, () => putStatement(recordOf(ctx, stored(), 'completed')))) return;
          (s.beforeAnswer ??= []).push(() => put(ctx, stored(), 'completed'));
          return;
        }
        const assembler = new StreamAssembler();
        s.result.stream.observe({
          name: 'storage',
          // What the client got, after every plugin outside this one had its say (a redactor's edits included).
          onWritten: (chunk) => assembler.push(chunk),
          onEnd: (end) =>
            save(ctx, assembler.choices, end.error || end.cancelled ? 'incomplete' : 'completed', end.usage),
        });
      },
      close() {
        clearInterval(sweeper);
      },
    };
  },
});
