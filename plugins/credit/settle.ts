/**
 * @module
 * Settling a request's reservation (the store's half is store/settle.ts): the charge for what the answer used,
 * checked and capped at its attempt's bound (usage-check.ts), shown on the answer's usage, and settled with the
 * generation record and the request's other writes in one transaction; an overrun is counted and logged. One function
 * per kind of answer: plain, streamed (observed to its end), embeddings, or none; each returns the settlement's own
 * promise, not one of its own (docs/decisions/0032).
 */
import type { Logger } from 'pino';
import * as door from '../../src/plugin';
import type {
  ChatCompletion,
  ChatStream,
  EmbeddingsResponse,
  GatewayContext,
  GatewayState,
  Generation,
  PendingWrite,
  Store,
  Usage,
} from '../../src/plugin';
import { embeddingsCharge } from './embeddings';
import type { CreditMetrics } from './metrics';
import { usageParts, type Price } from './price';
import { insured, waived } from './insurance';
import { buildGeneration, type Outcome } from './record';
import type { Overrun } from './store/reserve';
import type { CreditReservations } from './store/repo';
import { chargeFor, type Charge } from './usage-check';

// Read once, at load (a re-exported name is a getter; called for every request): docs/decisions/0034.
const { countTextTokens, fromNano, messageText, promptTokens, takeBatch, writeParams } = door;

/** Settle a reservation to what the request produced (its generation record) and the charge for it, if any. */
export type Settle = (ctx: GatewayContext, reservation: string, out: Outcome, charge: Charge | null) => Promise<void>;

export interface SettlementDeps {
  reservations: CreditReservations;
  /** The other writes of a request are made on their own when its settlement is refused. */
  store: Pick<Store, 'db'>;
  logger: Logger;
  metrics: CreditMetrics;
}

/** The settling function, made once at setup. */
export function settlement({ reservations, store, logger, metrics }: SettlementDeps): Settle {
  const { overruns, overrunCredits } = metrics;

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
      await reservations.settle(
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

  return async function settle(ctx, reservation, out, charge) {
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
      await reservations.settleLogged(reservation, cost, gen, overrun, writes, refused);
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
  };
}

/** A request that produced nothing to bill (it failed, or left no result): its record, and no charge. */
export function settleEmpty(
  settle: Settle,
  ctx: GatewayContext,
  reservation: string,
  errorCode: string,
  streamed: boolean,
  cancelled: boolean,
): Promise<void> {
  return settle(
    ctx,
    reservation,
    {
      usage: null,
      cost: 0,
      finishReason: null,
      streamed,
      cancelled,
      status: 'error',
      errorCode,
      firstContentAt: null,
    },
    null,
  );
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

/** OpenRouter's usage accounting: `usage: {include: true}` asks for the cost's breakdown as well as the cost. */
function wantsCostDetails(s: GatewayState): boolean {
  const u = s.options.usage;
  return typeof u === 'object' && u !== null && (u as { include?: unknown }).include === true;
}

/**
 * The cost's parts in credits, at the served deployment's price: what the usage would cost (before the reservation's
 * cap), and whether zero-completion insurance waived it.
 */
function costDetails(price: Price, c: Charge, waivedAll: boolean): Record<string, number | boolean> {
  const p = usageParts(price, c.usage);
  const out: Record<string, number | boolean> = {
    prompt: fromNano(p.prompt),
    completion: fromNano(p.completion),
    cache: fromNano(p.cache),
    reasoning: fromNano(p.reasoning),
    request: fromNano(p.request),
    upstream_inference_cost: fromNano(p.request + p.prompt + p.cache + p.completion + p.reasoning),
  };
  if (waivedAll) out.zero_completion_insurance = true;
  return out;
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

/** A plain answer: charged for its usage (or the gateway's count), which then shows the checked counts and `cost`. */
export function settleCompletion(
  settle: Settle,
  ctx: GatewayContext,
  reservation: string,
  body: ChatCompletion,
  price: Price,
  cap: number,
): Promise<void> {
  const s = ctx.state.gateway;
  const measured = chargeFor(
    price,
    completionUsage(body, () => promptTokens(s)),
    cap,
  );
  const finish = body.choices[0]?.finish_reason ?? null;
  const free = insured(measured, finish, hasOutput(body));
  const charge = free ? waived(measured) : measured;
  if (body.usage) showCharge(body.usage, charge);
  else body.usage = { ...charge.usage, cost: fromNano(charge.cost) };
  if (wantsCostDetails(s)) body.usage.cost_details = costDetails(price, measured, free);
  return settle(
    ctx,
    reservation,
    {
      usage: charge.usage,
      cost: charge.cost,
      finishReason: body.choices[0]?.finish_reason ?? null,
      streamed: false,
      cancelled: false,
      status: 'completed',
      errorCode: null,
      firstContentAt: null,
      insured: free,
    },
    charge,
  );
}

/** Whether a plain answer carries any output: text (or reasoning) or a tool call, by the gateway's own look. */
function hasOutput(body: ChatCompletion): boolean {
  return body.choices.some(
    (c) => messageText(c.message).length > 0 || (c.message.tool_calls?.length ?? 0) > 0 || !!c.message.reasoning,
  );
}

/** An embeddings answer: charged for the provider's checked count. */
export function settleEmbeddings(
  settle: Settle,
  ctx: GatewayContext,
  reservation: string,
  body: EmbeddingsResponse,
  price: Price,
  cap: number,
): Promise<void> {
  const { charge, outcome } = embeddingsCharge(body, price, cap);
  return settle(ctx, reservation, outcome, charge);
}

/**
 * A stream is observed, never awaited: its usage chunk is charged (and shows the charge) as it passes, and the
 * reservation is settled when the stream ends; a stream cut, broken or ended without that chunk is billed the usage
 * its end reports (what the upstream reported at its start and the output produced so far), if any.
 */
export function observeStream(
  settle: Settle,
  ctx: GatewayContext,
  reservation: string,
  stream: ChatStream,
  price: Price,
  cap: number,
): void {
  let charged: Charge | null = null;
  const details = wantsCostDetails(ctx.state.gateway);
  // Whether any chunk carried output, and the first choice's finish: the usage chunk comes after both.
  let output = false;
  let finish: string | null = null;
  stream.observe({
    name: 'credit',
    // It edits only the usage chunk's usage (the charge): a stream it observes may pass through.
    readOnly: true,
    onChunk(chunk) {
      const c = chunk.choices[0];
      if (c) {
        const d = c.delta;
        if (!output && d && (!!d.content || !!d.reasoning || (d.tool_calls?.length ?? 0) > 0)) output = true;
        if (c.finish_reason) finish = c.finish_reason;
      } else if (chunk.usage) {
        charged = chargeFor(price, chunk.usage, cap);
        const free = insured(charged, finish, output);
        if (free) charged = waived(charged);
        showCharge(chunk.usage, charged);
        if (details) chunk.usage.cost_details = costDetails(price, chargeFor(price, chunk.usage, cap), free);
      }
    },
    onEnd: (end) => {
      const measured: Charge | null =
        end.error === null && !end.cancelled && charged !== null
          ? charged
          : end.usage
            ? chargeFor(price, end.usage, cap)
            : null;
      // A stream that ended (broken, cancelled or finished) with no content and a blank or error finish costs nothing.
      const free = insured(measured, end.error ? 'error' : end.finishReasons[0], end.firstContentAt !== null);
      const charge = free && measured ? waived(measured) : measured;
      return settle(
        ctx,
        reservation,
        {
          usage: charge?.usage ?? null,
          cost: charge?.cost ?? 0,
          finishReason: end.finishReasons[0] ?? null,
          streamed: true,
          cancelled: end.cancelled,
          status: end.error || end.cancelled ? 'incomplete' : 'completed',
          errorCode: end.error?.code ?? null,
          firstContentAt: end.firstContentAt,
          insured: free,
        },
        charge,
      );
    },
  });
}
