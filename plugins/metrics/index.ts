import { createServer, type Server } from 'node:http';
import {
  addPluginTimer,
  collectDefaultMetrics,
  constantTimeEqual,
  definePlugin,
  errors,
  HTTP_OBSERVER,
  nowMs,
  toGatewayError,
  type HttpObserver,
  type PluginTimer,
  type Usage,
} from '../../src/plugin';
import { createInstruments, statusClass } from './instruments';
import { LoopDelayHistogram } from './loop-delay';

export interface MetricsConfig {
  /** Require `Authorization: Bearer <token>` on /metrics. */
  token?: string;
  /** Serve /metrics on this separate port (on server.host) instead of the gateway's. */
  port?: number;
  /** Add a `key` label: the first 12 hex characters of the key's SHA-256. Off by default. */
  key_label: boolean;
  /** How often (ms) the event-loop delay monitor's timer wants to run. */
  loop_delay_resolution_ms: number;
}

/**
 * Prometheus metrics (`GET /metrics`): requests, gateway-added and upstream latency, time
 * to first token, tokens, credits, upstream errors, retries, in-flight requests and open
 * streams, per-plugin time, store operations, and the process. Put it first in the chain.
 */
export default definePlugin<MetricsConfig>({
  name: 'metrics',
  description: 'Prometheus metrics on /metrics.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      token: { type: 'string', minLength: 8 },
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      key_label: { type: 'boolean', default: false },
      loop_delay_resolution_ms: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
    },
  },
  async setup(config, services) {
    const registry = services.metrics;
    // Process metrics (and their GC observer and loop timer) only where /metrics is served.
    collectDefaultMetrics(registry);
    const m = createInstruments(registry, config.key_label);
    const loopDelay = new LoopDelayHistogram(config.loop_delay_resolution_ms).register(registry);
    const timer: PluginTimer = (plugin, seconds) => m.plugin.with(plugin).observe(seconds);
    addPluginTimer(services.shared, timer);
    const http: HttpObserver = (route, method, status) => m.http.with(route, method, statusClass(status)).inc();
    services.shared.set(HTTP_OBSERVER, http);
    services.store.db.observe((op, seconds, failed) => {
      m.store.with(op).observe(seconds);
      if (failed) m.storeErrors.inc({ op });
    });

    const countTokens = (model: string, u: Usage) => {
      m.tokens.with(model, 'prompt').inc(u.prompt_tokens);
      m.tokens.with(model, 'completion').inc(u.completion_tokens);
      m.tokens.with(model, 'cached').inc(u.prompt_tokens_details?.cached_tokens ?? 0);
      m.tokens.with(model, 'reasoning').inc(u.completion_tokens_details?.reasoning_tokens ?? 0);
    };
    const authorized = (header: string | undefined) =>
      !config.token || (header !== undefined && constantTimeEqual(header, `Bearer ${config.token}`));
    let server: Server | undefined;
    if (config.port !== undefined) {
      server = createServer((req, res) => {
        if (req.url !== '/metrics') return void res.writeHead(404).end();
        if (!authorized(req.headers.authorization)) return void res.writeHead(401).end();
        void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text));
      });
      await new Promise<void>((r) => server!.listen(config.port, services.config.server.host, () => r()));
    } else {
      services.router.get('/metrics', async (ctx) => {
        if (!authorized(ctx.get('authorization') || undefined))
          throw errors.unauthorized('metrics_token_required', 'GET /metrics needs the metrics bearer token');
        ctx.type = registry.contentType;
        ctx.body = await registry.metrics();
      });
    }

    return {
      async middleware(ctx, next) {
        const s = ctx.state.gateway;
        const model = s.model.id;
        const streamed = s.request.stream === true ? 'true' : 'false';
        const counted = (status: number) => {
          const provider = s.attempts[s.attempts.length - 1]?.provider ?? 'none';
          const series = config.key_label
            ? m.requests.with(
                model,
                provider,
                statusClass(status),
                streamed,
                s.principal?.keyHash.slice(0, 12) ?? 'none',
              )
            : m.requests.with(model, provider, statusClass(status), streamed);
          series.inc();
        };
        const attemptsMetrics = () => {
          let made = 0;
          for (const a of s.attempts) {
            m.attempts.with(a.provider, a.status).inc();
            if (a.status === 'ok') m.upstream.with(a.provider).observe(a.latencyMs / 1000);
            else if (a.status === 'error' && a.error)
              m.upstreamErrors.inc({ provider: a.provider, code: a.error.code });
            if (a.status !== 'skipped') made++;
          }
          if (made > 1) m.retries.inc({ model }, made - 1);
          if (s.attempts.length > 1 && s.principal)
            m.keyExtraAttempts.inc({ key: s.principal.keyHash.slice(0, 12) }, s.attempts.length - 1);
          const served = s.attempts[s.attempts.length - 1];
          if (served?.status === 'ok' && served.model !== model) m.fallbacks.inc({ model });
        };
        m.inFlight.inc();
        try {
          await next();
        } catch (e) {
          m.inFlight.dec();
          attemptsMetrics();
          counted(toGatewayError(e).status);
          throw e;
        }
        const ready = Number(process.hrtime.bigint() - s.startedAt) / 1e9;
        m.added.with(model).observe(Math.max(0, ready - s.upstreamMs / 1000));
        attemptsMetrics();
        const result = s.result;
        if (result?.kind !== 'stream') {
          m.inFlight.dec();
          counted(200);
          m.duration.with(model, streamed).observe(ready);
          const u = result?.kind === 'embeddings' ? { ...result.body.usage, completion_tokens: 0 } : result?.body.usage;
          if (u) {
            countTokens(model, u);
            if (typeof u.cost === 'number') m.credits.with(model).inc(u.cost);
          }
          return;
        }
        m.openStreams.inc();
        let last = 0;
        result.stream.observe({
          name: 'metrics',
          onChunk: (chunk) => {
            const now = nowMs();
            if (last !== 0 && chunk.choices.length > 0) m.interToken.with(model).observe((now - last) / 1000);
            last = now;
            const u = chunk.choices.length === 0 ? chunk.usage : null;
            if (u && typeof u.cost === 'number') m.credits.with(model).inc(u.cost);
          },
          onEnd: (end) => {
            m.inFlight.dec();
            m.openStreams.dec();
            counted(end.error ? end.error.status : end.cancelled ? 499 : 200);
            m.duration.with(model, streamed).observe(Number(end.endedAt - s.startedAt) / 1e9);
            if (end.firstContentAt !== null) m.ttft.with(model).observe(Number(end.firstContentAt - s.startedAt) / 1e9);
            if (end.usage) countTokens(model, end.usage);
          },
        });
      },
      async close() {
        loopDelay.close();
        if (server) await new Promise<void>((r) => server!.close(() => r()));
      },
    };
  },
});
