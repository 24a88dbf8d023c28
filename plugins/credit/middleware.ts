/**
 * @module
 * The credit plugin's step on the chat chain: reserve the most the request's plan can cost before the upstream call
 * (402 and nothing sent when the account or the key cannot cover it), then settle to what the attempt that answered
 * used (settle.ts), when the answer is back or, for a stream, when it ends.
 */
import * as door from '../../src/plugin';
import type {
  AttemptGuard,
  AttemptPlan,
  GatewayContext,
  GatewayError,
  GatewayState,
  DeploymentConfig,
  ModelConfig,
  ModelRegistry,
  PricingConfig,
  Next,
  SharedServices,
  Store,
} from '../../src/plugin';
import { embeddingsReservation } from './embeddings';
import { metadataProblem } from './metadata';
import { billedPrice, effectivePrice, scaledPrice, type Price } from './price';
import { planReservation, type PlannedReservation } from './reservation';
import { observeStream, settleCompletion, settleEmbeddings, settleEmpty, type Settle } from './settle';
import type { ReserveResult } from './store/reserve';
import type { CreditReservations } from './store/repo';

// Read once, at load (a re-exported name is a getter; called for every request): docs/decisions/0034.
const { defaultPlan, deploymentPricing, errors, featureCharges, fixPlan, fromNano, HEALTH, MEASURES, openBatch } = door;
const { toGatewayError } = door;

/** Per request: the most an attempt on each model may cost, so that no attempt outside the reservation is made. */
export type Covered = WeakMap<GatewayState, Map<string, number>>;

export interface CreditDeps {
  store: Pick<Store, 'accounts' | 'keys'>;
  models: ModelRegistry;
  shared: SharedServices;
  /** A model's or a deployment's pricing in nano-credits (priceBook). */
  prices: (pricing: PricingConfig) => Price;
  reservations: CreditReservations;
  covered: Covered;
  settle: Settle;
}

/** The per-attempt guard: an attempt on a model the request's reservation does not cover is not made. */
export function reservationGuard(covered: Covered): AttemptGuard {
  return {
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
  };
}

/** 400 for an item with no known token maximum, on a model that refuses them to keys with a credit limit. */
function unboundedRefused(unbounded: NonNullable<PlannedReservation['unbounded']>): GatewayError {
  return errors.invalidRequest(
    `${unbounded.param} has no known token maximum on model '${unbounded.model.id}', ` +
      'so a key with a credit limit cannot send it',
    unbounded.param,
    'unbounded_item',
  );
}

/** 402 for a reservation the account's credit or the key's limit does not cover. */
function notCovered(r: Extract<ReserveResult, { ok: false }>, amount: number): GatewayError {
  const most = fromNano(amount);
  return r.limit === 'account'
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

/**
 * Reserve for every attempt of the plan (fallback's, or the one routing would make, fixed here), hand the request
 * on with a batch open for the writes of the plugins inside it, and settle its reservation to the attempt that
 * answered, at that attempt's model's price and capped at its bound.
 */
export function creditMiddleware({ store, models, shared, prices, reservations, covered, settle }: CreditDeps) {
  return async function credit(ctx: GatewayContext, next: Next): Promise<void> {
    const s = ctx.state.gateway;
    const principal = s.principal;
    if (!principal) throw errors.internal();
    const bad = metadataProblem(s.options.metadata);
    if (bad) throw bad;
    const wantsCustom = s.options.input_cost_per_token !== undefined || s.options.output_cost_per_token !== undefined;
    const customAllowed = wantsCustom ? Boolean((await store.accounts.get(principal.accountId))?.customPricing) : false;
    // A deployment with its own prices is charged at them (the model's otherwise).
    const priceOf = (m: ModelConfig, d?: DeploymentConfig): Price => {
      const base = prices(d ? deploymentPricing(m, d) : m.pricing);
      return wantsCustom ? effectivePrice(base, s.options, customAllowed) : base;
    };
    // Without a fallback plugin, routing would make this same plan: make it here and hand it on, fixed.
    const plan: AttemptPlan = s.plan ?? defaultPlan(s, s.model, models, shared.get(HEALTH), shared.get(MEASURES));
    fixPlan(s, plan);
    const planned =
      s.operation === 'embeddings'
        ? embeddingsReservation(plan, s, priceOf)
        : planReservation(plan, s.options, priceOf);
    if (planned.unbounded && planned.unbounded.model.credit_bound?.unbounded_items === 'refuse') {
      const key = await store.keys.get(principal.keyHash);
      if (key?.limit !== null && key?.limit !== undefined) throw unboundedRefused(planned.unbounded);
    }
    covered.set(s, planned.caps);
    const r = await reservations.reserve(principal.accountId, principal.keyHash, planned.amount);
    if (!r.ok) throw notCovered(r, planned.amount);
    openBatch(s.extensions); // writes of plugins inside (storage) commit with the settlement
    try {
      await next();
    } catch (e) {
      await settleEmpty(settle, ctx, r.id, toGatewayError(e).code, s.request.stream === true, s.abort.aborted);
      throw e;
    }
    // The attempt that answered is billed at its own deployment's price, capped at its model's bound (the dearest
    // deployment of that model the plan could reach), with the billed features its request used.
    const served = s.served;
    const servedModel = served?.model ?? s.model;
    const servedRequest = served?.request ?? s.request;
    const billed = billedPrice(priceOf(servedModel, served?.deployment), featureCharges(servedRequest, servedModel));
    // An answer from the response cache is billed the part of the price its operator set (0: free).
    const price = s.cache?.status === 'hit' ? scaledPrice(billed, s.cache.charge ?? 0) : billed;
    const cap = planned.caps.get(servedModel.id) ?? planned.amount;
    const result = s.result;
    if (result?.kind === 'embeddings') await settleEmbeddings(settle, ctx, r.id, result.body, price, cap);
    else if (result?.kind === 'completion') await settleCompletion(settle, ctx, r.id, result.body, price, cap);
    else if (result?.kind === 'stream') observeStream(settle, ctx, r.id, result.stream, price, cap);
    else await settleEmpty(settle, ctx, r.id, 'no_result', false, false);
  };
}
