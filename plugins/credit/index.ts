import {
  Counter,
  countTextTokens,
  defaultPlan,
  definePlugin,
  errors,
  featureCharges,
  fixPlan,
  fromNano,
  HEALTH,
  messageText,
  openBatch,
  promptTokens,
  takeBatch,
  toGatewayError,
  writeParams,
  type AttemptPlan,
  type ChatCompletion,
  type GatewayContext,
  type GatewayState,
  type Generation,
  type ModelConfig,
  type PendingWrite,
  type Usage,
} from '../../src/plugin';
import { type Overrun } from './store/reserve';
import { billedPrice, effectivePrice, modelPrice, type Price } from './price';
import { buildGeneration, type Outcome } from './record';
import { embeddingsCharge, embeddingsReservation } from './embeddings';
import { registerGenerationRoutes } from './routes';
import { metadataProblem } from './metadata';
import { planReservation } from './reservation';
import { chargeFor, type Charge } from './usage-check';
import { CreditReservations } from './store/repo';
import { creditMigrations } from './store/migrations';

export interface CreditConfig {
  /**
   * Release reservations this old at start-up and every minute (a crashed replica's); 0 = the request timeout cap plus
   * a minute.
   */
  stale_reservation_ms: number;
}

/** Usage the upstream reported, or the gateway's own count of the answer (and of the prompt) when it reported none. */
function completionUsage(body: ChatCompletion, countPrompt: () => number): Usage {
  if (body.usage) return body.usage;
  const promptTokens = countPrompt();
  let completion = 0;
  for (const c of body.choices) {
    completion += countTextTokens(messageText(c.message));
    for (const t of c.message.tool_calls ?? [])
      completion += countTextTokens(t.function.name) + countTextTokens(t.function.arguments);
  }
  return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
}

/**
 * Write the checked counts and the cost onto the usage object the client gets (in place: the stream writer holds it).
 */
function showCharge(target: Usage, c: Charge): void {
  target.prompt_tokens = c.usage.prompt_tokens;
  target.completion_tokens = c.usage.completion_tokens;
  target.total_tokens = c.usage.total_tokens;
  if (c.usage.prompt_tokens_details) target.prompt_tokens_details = c.usage.prompt_tokens_details;
  if (c.usage.completion_tokens_details) target.completion_tokens_details = c.usage.completion_tokens_details;
  target.cost = fromNano(c.cost);
}

/**
 * Credit metering: reserve an upper bound of what the request can cost, over every attempt
 * of its plan, before the upstream call (402 and nothing sent when the account or key cannot
 * cover it), settle to the checked real cost capped at that bound (the excess is an overrun,
 * recorded, counted and logged), for plain answers and streams alike (also cut or broken
 * ones), and write the generation record. Every answer's usage carries `cost` in credits.
 */
export default definePlugin<CreditConfig>({
  name: 'credit',
  description: 'Reserves and settles credit per request; generation records.',
  requires: ['principal'],
  provides: ['credit'],
  // The plan must be final when credit reserves for every attempt of it.
  after: ['fallback'],
  store: { migrations: creditMigrations, procedures: require.resolve('./store/procedures') },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { stale_reservation_ms: { type: 'integer', minimum: 0, default: 0 } },
  },
  async setup(config, services) {
    const { store, logger, models } = services;
    const credit = CreditReservations.of(store);
    const prices = new Map<string, Price>(models.all().map((m) => [m.id, modelPrice(m)]));
    const staleMs = config.stale_reservation_ms || services.config.server.max_request_timeout_s * 1000 + 60_000;
    // One process on SQLite owns every reservation: all of them are left over from before.
    const released = await credit.releaseStale(store.driver === 'sqlite' ? 0 : staleMs);
    if (released > 0) logger.warn({ released }, 'released credit reservations left by an earlier process');
    const sweeper = setInterval(
      () =>
        void credit.releaseStale(staleMs).catch((e: unknown) => logger.error({ err: e }, 'reservation sweep failed')),
      60_000,
    );
    sweeper.unref();
    registerGenerationRoutes(services.router, store, services.shared);
    /** Per request: what its reservation covers, so that no attempt outside it is made. */
    const covered = new WeakMap<GatewayState, Map<string, number>>();
    services.attemptGuards.register({
      name: 'credit',
      check(s, a) {
        const caps = covered.get(s);
        if (!caps || caps.has(a.model.id)) return undefined;
        return {
          refuse: errors.insufficientCredits(
            'attempt_not_reserved',
            `No credit was reserved for an attempt on the model '${a.model.id}'; it is not made`,
          ),
        };
      },
    });
    const registers = [services.metrics];
    const overruns = new Counter({
      name: 'gateway_credit_overrun_total',
      help: 'Answers whose upstream usage exceeded the reservation or was malformed, by model and reason',
      labelNames: ['model', 'reason'],
      registers,
    });
    const overrunCredits = new Counter({
      name: 'gateway_credit_overrun_credits_total',
      help: 'Credits of upstream usage beyond the reservation, carried by the operator, by model',
      labelNames: ['model'],
      registers,
    });

    /**
     * Nothing the client sent may keep the charge from landing: a settlement the store refused is made once more
     * without the client's free-form fields and without the other writes, which then follow on their own.
     */
    async function settleAgain(
      e: unknown,
      requestId: string,
      reservation: string,
      cost: number,
      gen: Generation,
      overrun: Overrun | null,
      writes: PendingWrite[],
    ): Promise<boolean> {
      logger.error({ err: e, requestId }, 'credit settlement failed; retrying without client fields');
      try {
        await credit.settle(
          reservation,
          cost,
          { ...gen, metadata: null, user: null, appReferer: null, appTitle: null },
          overrun,
        );
        for (const w of writes) {
          const params = writeParams(w);
          if (!params) continue; // does not serialize: left out, as in the settlement
          await store.db
            .write(w.sql, params)
            .catch((e3: unknown) => logger.error({ err: e3, requestId }, 'a write of the request failed'));
        }
        return true;
      } catch (e2) {
        // The answer has gone out; the reservation stays and the sweep releases it.
        logger.error({ err: e2, requestId }, 'credit settlement failed');
        return false;
      }
    }

    async function settle(
      ctx: GatewayContext,
      reservation: string,
      out: Outcome,
      charge: Charge | null,
    ): Promise<void> {
      const gen = buildGeneration(ctx, out);
      const overrun = charge?.reason ? { amount: charge.overrun, reason: charge.reason } : null;
      // The request's other writes (its stored response) commit in the same transaction.
      const writes = takeBatch(ctx.state.gateway.extensions);
      const { requestId } = ctx.state.gateway;
      const cost = out.cost;
      // Kept until the store answers (a flush of its worker later): what a second try needs, not the request's context.
      const refused = (e: unknown) => void settleAgain(e, requestId, reservation, cost, gen, overrun, writes);
      try {
        // Done once it is in the store's log; refused by the store after that, it is settled again as below.
        await credit.settleLogged(reservation, cost, gen, overrun, writes, refused);
      } catch (e) {
        if (!(await settleAgain(e, requestId, reservation, cost, gen, overrun, writes))) return;
      }
      if (overrun) {
        overruns.inc({ model: gen.model, reason: overrun.reason });
        overrunCredits.inc({ model: gen.model }, fromNano(overrun.amount));
        logger.warn(
          {
            requestId,
            generationId: gen.id,
            model: gen.model,
            provider: gen.provider,
            charged: fromNano(cost),
            overrun: fromNano(overrun.amount),
            reason: overrun.reason,
          },
          'upstream usage beyond the reservation: charge capped',
        );
      }
    }

    return {
      async middleware(ctx, next) {
        const s = ctx.state.gateway;
        const principal = s.principal;
        if (!principal) throw errors.internal();
        const bad = metadataProblem(s.options.metadata);
        if (bad) throw bad;
        const wantsCustom =
          s.options.input_cost_per_token !== undefined || s.options.output_cost_per_token !== undefined;
        const customAllowed = wantsCustom
          ? Boolean((await store.accounts.get(principal.accountId))?.customPricing)
          : false;
        const priceOf = (m: ModelConfig): Price => {
          const base = prices.get(m.id) ?? modelPrice(m);
          return wantsCustom ? effectivePrice(base, s.options, customAllowed) : base;
        };
        // Without a fallback plugin, routing would make this same plan: make it here and hand it on, fixed.
        const plan: AttemptPlan = s.plan ?? defaultPlan(s, s.model, models, services.shared.get(HEALTH));
        fixPlan(s, plan);
        const planned =
          s.operation === 'embeddings'
            ? embeddingsReservation(plan, s, priceOf)
            : planReservation(plan, s.options, priceOf);
        if (planned.unbounded && planned.unbounded.model.credit_bound?.unbounded_items === 'refuse') {
          const key = await store.keys.get(principal.keyHash);
          if (key?.limit !== null && key?.limit !== undefined) {
            throw errors.invalidRequest(
              `${planned.unbounded.param} has no known token maximum on model '${planned.unbounded.model.id}', ` +
                'so a key with a credit limit cannot send it',
              planned.unbounded.param,
              'unbounded_item',
            );
          }
        }
        covered.set(s, planned.caps);
        const most = fromNano(planned.amount);
        const r = await credit.reserve(principal.accountId, principal.keyHash, planned.amount);
        if (!r.ok) {
          throw r.limit === 'account'
            ? errors.insufficientCredits(
                'insufficient_account_credits',
                `The account's credit does not cover this request (at most ${most} credits; ${fromNano(r.available)} ` +
                  `available). Add credit or lower max_tokens.`,
              )
            : errors.insufficientCredits(
                'key_limit_exceeded',
                `This key's credit limit does not cover this request (at most ${most} credits; ` +
                  `${fromNano(r.available)} left in its limit). Raise the limit or lower max_tokens.`,
              );
        }
        openBatch(s.extensions); // writes of plugins inside (storage) commit with the settlement
        try {
          await next();
        } catch (e) {
          const err = toGatewayError(e);
          await settle(
            ctx,
            r.id,
            {
              usage: null,
              cost: 0,
              finishReason: null,
              streamed: s.request.stream === true,
              cancelled: s.abort.aborted,
              status: 'error',
              errorCode: err.code,
              firstContentAt: null,
            },
            null,
          );
          throw e;
        }
        // The attempt that answered is billed at its own model's price, capped at its own bound.
        const served = s.attempts[s.attempts.length - 1]?.model;
        const servedModel = (served && models.get(served)) || s.model;
        // With the billed features (web search fee, priority multiplier...) the served attempt's request used.
        const servedRequest = plan.attempts.find((a) => a.model.id === servedModel.id)?.request ?? s.request;
        const price = billedPrice(priceOf(servedModel), featureCharges(servedRequest, servedModel));
        const cap = planned.caps.get(servedModel.id) ?? planned.amount;
        const result = s.result;
        if (result?.kind === 'embeddings') {
          const { charge, outcome } = embeddingsCharge(result.body, price, cap);
          await settle(ctx, r.id, outcome, charge);
        } else if (result?.kind === 'completion') {
          const charge = chargeFor(
            price,
            completionUsage(result.body, () => promptTokens(s)),
            cap,
          );
          if (result.body.usage) showCharge(result.body.usage, charge);
          else result.body.usage = { ...charge.usage, cost: fromNano(charge.cost) };
          await settle(
            ctx,
            r.id,
            {
              usage: charge.usage,
              cost: charge.cost,
              finishReason: result.body.choices[0]?.finish_reason ?? null,
              streamed: false,
              cancelled: false,
              status: 'completed',
              errorCode: null,
              firstContentAt: null,
            },
            charge,
          );
        } else if (result?.kind === 'stream') {
          let charged: Charge | null = null;
          result.stream.observe({
            name: 'credit',
            onChunk(chunk) {
              if (chunk.choices.length === 0 && chunk.usage) {
                charged = chargeFor(price, chunk.usage, cap);
                showCharge(chunk.usage, charged);
              }
            },
            onEnd: (end) => {
              const charge: Charge | null =
                end.error === null && !end.cancelled && charged !== null
                  ? charged
                  : end.usage
                    ? chargeFor(price, end.usage, cap)
                    : null;
              return settle(
                ctx,
                r.id,
                {
                  usage: charge?.usage ?? null,
                  cost: charge?.cost ?? 0,
                  finishReason: end.finishReasons[0] ?? null,
                  streamed: true,
                  cancelled: end.cancelled,
                  status: end.error || end.cancelled ? 'incomplete' : 'completed',
                  errorCode: end.error?.code ?? null,
                  firstContentAt: end.firstContentAt,
                },
                charge,
              );
            },
          });
        } else {
          await settle(
            ctx,
            r.id,
            {
              usage: null,
              cost: 0,
              finishReason: null,
              streamed: false,
              cancelled: false,
              status: 'error',
              errorCode: 'no_result',
              firstContentAt: null,
            },
            null,
          );
        }
      },
      close() {
        clearInterval(sweeper);
      },
    };
  },
});
