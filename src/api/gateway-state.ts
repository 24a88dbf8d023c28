import { RequestAbort } from '../pipeline/request-abort';
import type { ModelConfig } from '../config/types';
import { errors } from '../errors';
import { newCompletionId } from '../ids';
import type { Lifecycle } from '../server/lifecycle';
import type { Authenticate } from '../auth/contract';
import { authenticateFirst } from '../server/early-auth';
import { readJson } from './read-json';

/** The body of a request whose `input` is required (/v1/responses, /v1/embeddings): a JSON object that has one. */
export async function readInputBody(
  ctx: GatewayContext,
  deps: Parameters<typeof readChainBody>[1],
): Promise<Record<string, unknown> & { input: unknown }> {
  const body = await readChainBody(ctx, deps);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object', null, 'invalid_body');
  }
  const b = body as Record<string, unknown>;
  if (b.input === undefined || b.input === null)
    throw errors.invalidRequest('input is required', 'input', 'missing_field');
  return b as Record<string, unknown> & { input: unknown };
}

/**
 * The body of a chain request, read the same way on every endpoint: the key is checked from
 * the headers first (when the auth plugin is in the chain), so an unauthenticated client
 * cannot make the gateway read its body; then the JSON within the size and depth limits.
 */
export function readChainBody(
  ctx: GatewayContext,
  deps: { authenticate?: Authenticate; limit: number; limitText: string; maxDepth: number },
): Promise<unknown> {
  // Not an async function: returning readJson's promise from one costs the caller two more turns of the microtask
  // queue (the promise is adopted), on every request.
  const read = () => readJson(ctx.req, deps.limit, deps.limitText, deps.maxDepth);
  return deps.authenticate ? authenticateFirst(ctx, deps.authenticate).then(read) : read();
}
import type { GatewayContext } from '../pipeline/plugin';
import type { AttemptPlan, GatewayRequestOptions, GatewayState, Operation } from '../pipeline/state';
import type { EmbeddingsRequest } from '../types/embeddings';
import type { ChatRequest } from '../types/openai';

export interface StateInit {
  startedAt: bigint;
  operation: Operation;
  request: ChatRequest;
  options: GatewayRequestOptions;
  model: ModelConfig;
  embeddings?: EmbeddingsRequest;
  /** Default: a new `chatcmpl-` id. */
  completionId?: string;
}

/**
 * The state's own fields, with `signal` a getter on the prototype: an accessor in an object
 * literal would make every state a slow-mode object (measured: 3x the scavenge time and
 * ~40% more CPU per request on the core chain).
 */
class RequestState implements Partial<GatewayState> {
  attempts: GatewayState['attempts'] = [];
  responseHeaders: Record<string, string> = {};
  upstreamMs = 0;
  extensions: Record<string, unknown> = {};
  readonly completionId: string;
  startedAt: bigint;
  operation: GatewayState['operation'];
  request: GatewayState['request'];
  options: GatewayState['options'];
  model: GatewayState['model'];
  embeddings: GatewayState['embeddings'];

  constructor(
    public requestId: string,
    init: StateInit,
    readonly abort: RequestAbort,
  ) {
    this.completionId = init.completionId ?? newCompletionId();
    this.startedAt = init.startedAt;
    this.operation = init.operation;
    this.request = init.request;
    this.options = init.options;
    this.model = init.model;
    this.embeddings = init.embeddings;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  private planned: AttemptPlan | undefined = undefined;
  private planFixed = false;

  /** The attempt plan (the fallback plugin writes it); once fixed (fixPlan), assigning another throws. */
  get plan(): AttemptPlan | undefined {
    return this.planned;
  }

  set plan(plan: AttemptPlan | undefined) {
    if (this.planFixed) throw new TypeError("Cannot assign to read only property 'plan' of the request's state");
    this.planned = plan;
  }

  fixPlan(plan: AttemptPlan): void {
    this.planned = plan;
    this.planFixed = true;
  }
}

/**
 * Fix the request's attempt plan (credit reserved for it): a later assignment throws, as to a read-only property. On
 * the state the gateway makes this is a field and a flag: Object.defineProperty took ~0.3-2 us a request (a runtime
 * call that reconfigures the property and moves the state to another map).
 */
export function fixPlan(s: GatewayState, plan: AttemptPlan): void {
  if (s instanceof RequestState) s.fixPlan(plan);
  else Object.defineProperty(s, 'plan', { value: plan, writable: false, enumerable: true, configurable: false });
}

/**
 * The per-request state for a chain run, its signal aborted when the client goes away before
 * the answer is written. With the lifecycle, shutdown waits for this answer (and stops it with
 * 503 shutting_down at the deadline).
 */
export function createState(ctx: GatewayContext, init: StateInit, lifecycle?: Lifecycle): GatewayState {
  const abort = new RequestAbort();
  const leave = lifecycle?.enter(abort);
  // 'close' comes once: `on` spares the wrapper `once` makes.
  ctx.res.on('close', () => {
    if (!ctx.res.writableFinished) abort.abort();
    leave?.();
  });
  return new RequestState(ctx.state.requestId, init, abort) as GatewayState;
}
