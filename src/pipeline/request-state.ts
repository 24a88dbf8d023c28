import { RequestAbort } from './request-abort';
import type { ModelConfig } from '../config/types';
import { newCompletionId } from '../ids';
import type { GatewayContext } from './plugin';
import type { AttemptPlan, GatewayRequestOptions, GatewayState, Operation } from './state';
import type { EmbeddingsRequest } from '../types/embeddings';
import type { ChatRequest } from '../types/openai';

export interface StateInit {
  startedAt: bigint;
  operation: Operation;
  request: ChatRequest;
  options: GatewayRequestOptions;
  model: ModelConfig;
  embeddings?: EmbeddingsRequest;
  /** The client's own request on an endpoint of another wire (GatewayState.inbound). */
  inbound?: GatewayState['inbound'];
  /** Default: a new `chatcmpl-` id. */
  completionId?: string;
  /** The model variant the request named (`:floor`, `:nitro`). */
  variant?: string;
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
  // A field from the start, so setting it keeps the state's shape (docs/decisions/0032).
  cache: GatewayState['cache'] = undefined;
  readonly completionId: string;
  startedAt: bigint;
  operation: GatewayState['operation'];
  request: GatewayState['request'];
  options: GatewayState['options'];
  model: GatewayState['model'];
  embeddings: GatewayState['embeddings'];
  inbound: GatewayState['inbound'];
  served: GatewayState['served'] = undefined;
  variant: GatewayState['variant'];

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
    this.inbound = init.inbound;
    this.variant = init.variant;
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
/** What a request's state tells the server's lifecycle: it entered (with its abort), and a function when it left. */
export interface RequestTracker {
  enter(abort: RequestAbort): () => void;
}

export function createState(ctx: GatewayContext, init: StateInit, lifecycle?: RequestTracker): GatewayState {
  const abort = new RequestAbort();
  const leave = lifecycle?.enter(abort);
  // 'close' comes once: `on` spares the wrapper `once` makes.
  ctx.res.on('close', () => {
    if (!ctx.res.writableFinished) abort.abort();
    leave?.();
  });
  return new RequestState(ctx.state.requestId, init, abort) as GatewayState;
}
