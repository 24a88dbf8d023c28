import type { ModelConfig } from '../config/types';
import { newCompletionId } from '../ids';
import type { GatewayContext } from '../pipeline/plugin';
import type { GatewayRequestOptions, GatewayState, Operation } from '../pipeline/state';
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

/** The per-request state for a chain run, its signal aborted when the client goes away before the answer is written. */
export function createState(ctx: GatewayContext, init: StateInit): GatewayState {
  const ac = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) ac.abort();
  });
  return {
    requestId: ctx.state.requestId,
    ...init,
    completionId: init.completionId ?? newCompletionId(),
    attempts: [],
    responseHeaders: {},
    signal: ac.signal,
    upstreamMs: 0,
    extensions: {},
  };
}
