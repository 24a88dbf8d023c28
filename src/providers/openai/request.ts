import type { ChatRequest } from '../../types/openai';
import type { UpstreamRequest, UpstreamTarget } from '../types';

/** Join an api_base and a path without doubling or losing the slash. */
export function joinUrl(base: string, path: string): string {
  return base.endsWith('/') ? base + path.replace(/^\//, '') : base + (path.startsWith('/') ? path : `/${path}`);
}

/** Standard headers plus the provider's and the request's extra ones; the auth header is set last so nothing can replace it. */
export function upstreamHeaders(target: UpstreamTarget, auth: Record<string, string>): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...target.provider.headers,
    ...target.extraHeaders,
    ...auth,
  };
}

export function bearer(apiKey: string | undefined): Record<string, string> {
  return apiKey && apiKey !== 'none' ? { authorization: `Bearer ${apiKey}` } : {};
}

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
  const base = target.provider.api_base ?? 'https://api.openai.com/v1';
  return {
    url: joinUrl(base, '/chat/completions'),
    method: 'POST',
    headers: upstreamHeaders(target, bearer(target.provider.api_key)),
    body: JSON.stringify(buildOpenAIBody(req, target, stream)),
  };
}
