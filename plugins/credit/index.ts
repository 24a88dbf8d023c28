import { definePlugin, type GatewayContext } from '../../src/pipeline/plugin';
import { promptTokens } from '../../src/pipeline/state';
import { errors, toGatewayError } from '../../src/errors';
import { fromNano } from '../../src/store/money';
import { openBatch, takeBatch } from '../../src/store/request-batch';
import { countTextTokens, messageText } from '../../src/tokens/count';
import type { ChatCompletion, Usage } from '../../src/types/openai';
import { newCompletionId } from '../routing/index';
import { effectivePrice, maxCost, modelPrice, usageCost, type Price } from './price';
import { buildGeneration } from './record';
import { registerGenerationRoutes } from './routes';

export interface CreditConfig {
  /** Release reservations this old at start-up and every minute (a crashed replica's); 0 = the request timeout cap plus a minute. */
  stale_reservation_ms: number;
}

/** Usage the upstream reported, or the gateway's own count of the answer when it reported none. */
function completionUsage(body: ChatCompletion, promptTokens: number): Usage {
  if (body.usage) return body.usage;
  let completion = 0;
  for (const c of body.choices) {
    completion += countTextTokens(messageText(c.message));
    for (const t of c.message.tool_calls ?? []) completion += countTextTokens(t.function.name) + countTextTokens(t.function.arguments);
  }
  return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
}

/**
 * Credit metering: reserve the most a request can cost before the upstream call (402 and
 * nothing sent when the account or key cannot cover it), settle to the real cost after,
 * for plain answers and streams alike (also cut or broken ones), and write the
 * generation record. Every answer's usage carries `cost` in credits.
 */
export default definePlugin<CreditConfig>({
  name: 'credit',
  description: 'Reserves and settles credit per request; generation records.',
  requires: ['principal'],
  provides: ['credit'],
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { stale_reservation_ms: { type: 'integer', minimum: 0, default: 0 } },
  },
  async setup(config, services) {
    const { store, logger } = services;
    const prices = new Map<string, Price>(services.models.all().map((m) => [m.id, modelPrice(m)]));
    const staleMs = config.stale_reservation_ms || services.config.server.max_request_timeout_s * 1000 + 60_000;
    // One process on SQLite owns every reservation: all of them are left over from before.
    const released = await store.credit.releaseStale(store.driver === 'sqlite' ? 0 : staleMs);
    if (released > 0) logger.warn({ released }, 'released credit reservations left by an earlier process');
    const sweeper = setInterval(() => void store.credit.releaseStale(staleMs).catch((e: unknown) => logger.error({ err: e }, 'reservation sweep failed')), 60_000);
    sweeper.unref();
    registerGenerationRoutes(services.router, store, services.shared);

    async function settle(ctx: GatewayContext, reservation: string, out: Parameters<typeof buildGeneration>[1]): Promise<void> {
      try {
        await store.credit.settle(reservation, out.cost, buildGeneration(ctx, out), takeBatch(ctx.state.gateway.extensions));
      } catch (e) {
        // The answer has gone out; the reservation stays and the sweep releases it.
        logger.error({ err: e, requestId: ctx.state.gateway.requestId }, 'credit settlement failed');
      }
    }

    return {
      async middleware(ctx, next) {
        const s = ctx.state.gateway;
        const principal = s.principal;
        if (!principal) throw errors.internal();
        s.extensions.completionId ??= newCompletionId();
        const base = prices.get(s.model.id) as Price;
        const wantsCustom = s.options.input_cost_per_token !== undefined || s.options.output_cost_per_token !== undefined;
        const customAllowed = wantsCustom ? Boolean((await store.accounts.get(principal.accountId))?.customPricing) : false;
        let price = wantsCustom ? effectivePrice(base, s.options, customAllowed) : base;
        const promptCount = promptTokens(s);
        const r = await store.credit.reserve(principal.accountId, principal.keyHash, maxCost(price, promptCount, s.request, s.model));
        if (!r.ok) {
          throw r.limit === 'account'
            ? errors.insufficientCredits('insufficient_account_credits', `The account's credit does not cover this request (at most ${fromNano(maxCost(price, promptCount, s.request, s.model))} credits; ${fromNano(r.available)} available). Add credit or lower max_tokens.`)
            : errors.insufficientCredits('key_limit_exceeded', `This key's credit limit does not cover this request (${fromNano(r.available)} credits left in its limit). Raise the limit or lower max_tokens.`);
        }
        openBatch(s.extensions); // writes of plugins inside (storage) commit with the settlement
        try {
          await next();
        } catch (e) {
          const err = toGatewayError(e);
          await settle(ctx, r.id, { usage: null, cost: 0, finishReason: null, streamed: s.request.stream === true, cancelled: s.signal.aborted, status: 'error', errorCode: err.code, firstContentAt: null });
          throw e;
        }
        // A fallback model is billed at its own price (the reservation was made at the first model's).
        const served = s.attempts[s.attempts.length - 1]?.model;
        if (served && served !== s.model.id && !wantsCustom) price = prices.get(served) ?? price;
        const result = s.result;
        if (result?.kind === 'completion') {
          const usage = completionUsage(result.body, promptCount);
          const cost = usageCost(price, usage);
          result.body.usage = { ...usage, cost: fromNano(cost) };
          await settle(ctx, r.id, { usage, cost, finishReason: result.body.choices[0]?.finish_reason ?? null, streamed: false, cancelled: false, status: 'completed', errorCode: null, firstContentAt: null });
        } else if (result?.kind === 'stream') {
          let charged: number | null = null;
          result.stream.observe({
            name: 'credit',
            onChunk(chunk) {
              if (chunk.choices.length === 0 && chunk.usage) {
                charged = usageCost(price, chunk.usage);
                chunk.usage.cost = fromNano(charged);
              }
            },
            onEnd: (end) => {
              const usage = end.usage;
              const cost = end.error === null && !end.cancelled && charged !== null ? charged : usage ? usageCost(price, usage) : 0;
              return settle(ctx, r.id, {
                usage, cost, finishReason: end.finishReasons[0] ?? null, streamed: true, cancelled: end.cancelled,
                status: end.error || end.cancelled ? 'incomplete' : 'completed', errorCode: end.error?.code ?? null, firstContentAt: end.firstContentAt,
              });
            },
          });
        } else {
          await settle(ctx, r.id, { usage: null, cost: 0, finishReason: null, streamed: false, cancelled: false, status: 'error', errorCode: 'no_result', firstContentAt: null });
        }
      },
      close() {
        clearInterval(sweeper);
      },
    };
  },
});
