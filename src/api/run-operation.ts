import type { Logger } from 'pino';
import type { GatewayConfig, ModelConfig } from '../config/types';
import { errors } from '../errors';
import type { ModelRegistry } from '../models/registry';
import type { GatewayContext } from '../pipeline/plugin';
import type { GatewayRequestOptions, GatewayState } from '../pipeline/state';
import type { Lifecycle } from '../http/lifecycle';
import type { Authenticate } from '../auth/contract';
import type { ChatRequest } from '../types/openai';
import { parseSize } from './read-json';
import { servesEndpoint } from '../models/endpoints';
import { resolveModel } from '../models/resolve';
import { PresetBook } from '../models/presets';
import { createState, type StateInit } from '../pipeline/request-state';
import { readChainBody, readInputBody } from './read-body';
import { writeStream, type StreamFramer } from '../stream/sse-writer';
import type { ChatStream } from '../stream/chat-stream';

/** What every chain endpoint needs from the app. */
export interface OperationDeps {
  config: GatewayConfig;
  models: ModelRegistry;
  logger: Logger;
  lifecycle: Lifecycle;
  chain: (ctx: GatewayContext) => Promise<void>;
  /** When the auth plugin is in the chain: checked from the headers before the body is read. */
  authenticate?: Authenticate;
  /** The presets requests may name (gateway.yaml's and the admin API's); default: gateway.yaml's. */
  presets?: PresetBook;
}

/** A request as an operation parsed it: the chat request the chain sees and the gateway's own options. */
export interface ParsedRequest {
  request: ChatRequest;
  options: GatewayRequestOptions;
}

/**
 * One chain endpoint (chat, responses, embeddings, ...): how it reads its body and what it answers. The runner does
 * the rest the same way for all: the model and its endpoint, the request's state, the chain.
 */
export interface OperationSpec<P extends ParsedRequest> {
  /** The operation's name, in the state and in the wrong-endpoint error. */
  name: GatewayState['operation'];
  /** Which of a model's `endpoints` it needs. */
  endpoint: 'chat' | 'embeddings';
  /** The body must be an object with an `input` (responses, embeddings). */
  requiresInput?: boolean;
  parse(ctx: GatewayContext, body: Record<string, unknown>): P | Promise<P>;
  /** The state's fields beyond the request and options, once the model is known. */
  state?(model: ModelConfig, parsed: P): Partial<StateInit>;
  /** Called with the state once it exists (e.g. a count the endpoint already knows). */
  prepare?(s: GatewayState, parsed: P): void;
  answer(ctx: GatewayContext, s: GatewayState, parsed: P): Promise<void> | void;
  /**
   * After the chain: another round, as a new request through the whole chain (its own state, credit reservation,
   * limits and record: each round is metered as any request is), or null to answer. Responses' remote MCP tools.
   */
  again?(ctx: GatewayContext, s: GatewayState, parsed: P): Promise<P | null> | null;
  /** How a failure of the chain is shown on this endpoint (default: as it is). */
  chainError?(e: unknown): unknown;
}

/** How every chain endpoint reads its body: auth first when present, then the server's size and depth limits. */
export function chainBodyLimits(deps: OperationDeps) {
  const s = deps.config.server;
  return {
    authenticate: deps.authenticate,
    limit: parseSize(s.body_limit),
    limitText: s.body_limit,
    maxDepth: s.max_json_depth,
  };
}

/** The request `timeout` a client may give, and the one it gets when it gives none (spec 8). */
export function timeoutLimits(deps: OperationDeps): { defaultTimeoutS: number; maxTimeoutS: number } {
  return {
    defaultTimeoutS: deps.config.server.default_request_timeout_s,
    maxTimeoutS: deps.config.server.max_request_timeout_s,
  };
}

/**
 * The one request path of the chain endpoints: read the body (auth first), parse it as the operation says, resolve
 * the model (404, or 400 when it does not serve this endpoint), build the request's state, run the chain, answer.
 */
export function runOperation<P extends ParsedRequest>(
  spec: OperationSpec<P>,
  deps: OperationDeps,
): (ctx: GatewayContext) => Promise<void> {
  const bodyLimits = chainBodyLimits(deps);
  const presets = deps.presets ?? new PresetBook(deps.config.presets);
  return async (ctx) => {
    const startedAt = process.hrtime.bigint();
    const body = spec.requiresInput
      ? await readInputBody(ctx, bodyLimits)
      : ((await readChainBody(ctx, bodyLimits)) as Record<string, unknown>);
    // A parse that needs no promise (chat's) is not awaited: one turn of the microtask queue fewer a request.
    const maybe = spec.parse(ctx, body);
    const parsed = maybe instanceof Promise ? await maybe : maybe;
    // A configured id as it stands (the usual case) is looked up once; a preset or a variant is resolved to one.
    let model = parsed.options.preset === undefined ? deps.models.get(parsed.request.model) : undefined;
    let variant: string | undefined;
    if (!model)
      ({ model, variant } = resolveModel(
        deps.models,
        presets,
        parsed.request,
        parsed.options,
        spec.endpoint === 'embeddings',
      ));
    if (!servesEndpoint(model, spec.endpoint)) throw errors.wrongEndpoint(model.id, spec.name);
    let round = parsed;
    let s = enterRound(ctx, spec, deps, { model, variant }, round, startedAt);
    await runChain(ctx, spec, deps);
    // A hook that answers null at once is not awaited: chat's request path keeps its turns of the microtask queue.
    for (let again = spec.again?.(ctx, s, round); again; again = spec.again?.(ctx, s, round)) {
      const next = await again;
      if (!next) break;
      s = enterRound(ctx, spec, deps, { model, variant }, (round = next), process.hrtime.bigint());
      await runChain(ctx, spec, deps);
    }
    // An answer written at once (chat's completion) is not awaited: one turn of the microtask queue fewer.
    const answered = spec.answer(ctx, s, round);
    if (answered) await answered;
  };
}

/** A round's state (the request's, or a later round's), made the request's current one. */
function enterRound<P extends ParsedRequest>(
  ctx: GatewayContext,
  spec: OperationSpec<P>,
  deps: OperationDeps,
  { model, variant }: { model: ModelConfig; variant: string | undefined },
  parsed: P,
  startedAt: bigint,
): GatewayState {
  const init: StateInit = {
    startedAt,
    variant,
    operation: spec.name,
    request: parsed.request,
    options: parsed.options,
    model,
    ...spec.state?.(model, parsed),
  };
  const s = (ctx.state.gateway = createState(ctx, init, deps.lifecycle));
  spec.prepare?.(s, parsed);
  return s;
}

/** The chain on the current state, its failure shown as the operation says. */
function runChain<P extends ParsedRequest>(ctx: GatewayContext, spec: OperationSpec<P>, deps: OperationDeps) {
  const mapError = spec.chainError;
  if (!mapError) return deps.chain(ctx);
  return deps.chain(ctx).catch((e: unknown) => {
    throw mapError(e);
  });
}

/**
 * A streamed answer, as every chain endpoint writes it: Koa steps aside, the one stream writer drives the stream (in
 * `framer`'s wire format when given, else chat chunks) and the lifecycle waits for it on shutdown.
 */
export function answerStream(
  ctx: GatewayContext,
  s: GatewayState,
  stream: ChatStream,
  deps: OperationDeps,
  includeUsage: boolean,
  framer?: StreamFramer,
): Promise<unknown> {
  ctx.respond = false;
  return deps.lifecycle.track(
    writeStream(ctx.res, stream, {
      includeUsage,
      headers: s.responseHeaders,
      requestId: s.requestId,
      logger: deps.logger,
      stop: deps.lifecycle.stopSignal,
      framer,
    }),
  );
}
