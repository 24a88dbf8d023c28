import { errors, upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatRequest } from '../../types/openai';
import type { HttpProviderAdapter, UpstreamRequest, UpstreamTarget } from '../types';
import { buildOpenAIBody, joinUrl, upstreamHeaders } from '../openai/request';
import { parseOpenAIResponse } from '../openai/response';
import { mapOpenAIError, retryAfterSeconds } from '../openai/errors';
import { createCompatibleTranslator } from '../openai/compatible';
import { OPENAI_PARAMS } from '../openai';
import { isRecord } from '../shared';

export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** Azure's content filter refusals (400 code content_filter) keep their code; the rest as OpenAI's. */
function mapAzureError(status: number, body: unknown, headers: Record<string, string | string[] | undefined>, provider: string): GatewayError {
  const e = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  if (e?.code === 'content_filter') return upstreamStatusError(provider, status, String(e.message ?? 'content filtered'), 'content_filter', retryAfterSeconds(headers));
  return mapOpenAIError(status, body, headers, provider);
}

/** Azure OpenAI: /openai/deployments/{deployment}/chat/completions?api-version=..., api-key header. */
export const azureAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'azure',
  supportedParams: OPENAI_PARAMS,
  forwardsUnknownParams: true,
  streamFormat: 'sse',
  buildRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
    // Azure has no default endpoint: every resource has its own (https://{resource}.openai.azure.com).
    if (!target.provider.api_base) throw errors.upstreamUnavailable(target.provider.name, 'an azure provider needs api_base (https://{resource}.openai.azure.com)');
    const o = { ...target.provider.options, ...target.deployment.options };
    const version = encodeURIComponent(String(o.api_version ?? AZURE_DEFAULT_API_VERSION));
    const body = buildOpenAIBody(req, target, stream);
    delete body.model; // the deployment in the path decides
    // Azure takes reasoning_effort, not OpenRouter's reasoning object.
    const effort = isRecord(body.reasoning) ? body.reasoning.effort : undefined;
    if (typeof effort === 'string' && body.reasoning_effort === undefined) body.reasoning_effort = effort;
    delete body.reasoning;
    return {
      url: joinUrl(target.provider.api_base, `/openai/deployments/${encodeURIComponent(target.deployment.model)}/chat/completions?api-version=${version}`),
      method: 'POST',
      headers: upstreamHeaders(target, { 'api-key': target.provider.api_key ?? '' }),
      body: JSON.stringify(body),
    };
  },
  parseResponse: (body, ctx) => parseOpenAIResponse(body, ctx, 'azure'),
  createStreamTranslator: (ctx) => createCompatibleTranslator(ctx, 'azure'),
  mapError: mapAzureError,
};
