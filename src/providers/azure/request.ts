import { errors } from '../../errors';
import type { ChatRequest } from '../../types/openai';
import { isRecord } from '../shared';
import { postJson, targetOptions } from '../shared/http';
import { buildOpenAIBody } from '../openai/request';
import type { UpstreamRequest, UpstreamTarget } from '../types';

export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/**
 * A POST to /openai/deployments/{deployment}/{operation}?api-version=... with the api-key
 * header. Azure has no default endpoint: every resource has its own api_base.
 */
export function azurePost(target: UpstreamTarget, operation: string, body: unknown): UpstreamRequest {
  const base = target.provider.api_base;
  if (!base) {
    throw errors.upstreamUnavailable(
      target.provider.name,
      'an azure provider needs api_base (https://{resource}.openai.azure.com)',
    );
  }
  const version = encodeURIComponent(String(targetOptions(target).api_version ?? AZURE_DEFAULT_API_VERSION));
  const deployment = encodeURIComponent(target.deployment.model);
  const path = `/openai/deployments/${deployment}/${operation}?api-version=${version}`;
  return postJson(target, base, path, { 'api-key': target.provider.api_key ?? '' }, body);
}

export function buildAzureRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const body = buildOpenAIBody(req, target, stream);
  delete body.model; // the deployment in the path decides
  const effort = isRecord(body.reasoning) ? body.reasoning.effort : undefined;
  if (typeof effort === 'string' && body.reasoning_effort === undefined) body.reasoning_effort = effort;
  delete body.reasoning;
  return azurePost(target, 'chat/completions', body);
}
