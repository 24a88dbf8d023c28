import type { ChatRequest } from '../../types/openai';
import { bearer, postJson } from '../shared/http';
import type { UpstreamRequest, UpstreamTarget } from '../types';

export const OPENAI_BASE = 'https://api.openai.com/v1';

/**
 * An OpenAI-compatible upstream takes the request nearly as is: the model becomes the
 * deployment's model name, and a stream always asks for usage so that credit can settle
 * (the writer drops the usage chunk again when the client did not ask for it).
 */
export function buildOpenAIBody(req: ChatRequest, target: UpstreamTarget, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { ...req, model: target.deployment.model };
  if (stream) {
    body.stream = true;
    body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
  } else {
    delete body.stream;
    delete body.stream_options;
  }
  return body;
}

export function buildOpenAIRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const body = buildOpenAIBody(req, target, stream);
  return postJson(target, OPENAI_BASE, '/chat/completions', bearer(target.provider.api_key), body);
}
