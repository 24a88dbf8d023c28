import { isRecord } from '../shared';
import { postJson } from '../shared/http';
import { sseFrame } from '../same-wire';
import type { SameWire, SameWireRequest, UpstreamRequest, UpstreamTarget } from '../types';

const BASE = 'https://api.anthropic.com';

/** The provider's key, and the client's anthropic-version (else the provider's) and anthropic-beta, as sent. */
function auth(req: SameWireRequest, target: UpstreamTarget): Record<string, string> {
  const version =
    req.headers['anthropic-version'] ?? String(target.provider.options?.anthropic_version ?? '2023-06-01');
  const out: Record<string, string> = { 'x-api-key': target.provider.api_key ?? '', 'anthropic-version': version };
  const beta = req.headers['anthropic-beta'];
  if (beta !== undefined) out['anthropic-beta'] = beta;
  return out;
}

/** The client's body with the deployment's model in place of the client's (the same key, the same position). */
function withModel(body: Record<string, unknown>, model: string): Record<string, unknown> {
  return { ...body, model };
}

/**
 * Anthropic Messages passthrough: a /v1/messages request goes to Anthropic as the client sent it (system blocks,
 * cache_control, thinking blocks and their signatures, tool_use and tool_result, images, documents, betas, fields the
 * gateway does not know), `model` the deployment's; the answer and each stream event come back as Anthropic sent
 * them. count_tokens goes to Anthropic's own /v1/messages/count_tokens.
 */
export const anthropicSameWire: SameWire = {
  buildRequest(req: SameWireRequest, target: UpstreamTarget): UpstreamRequest {
    return postJson(target, BASE, '/v1/messages', auth(req, target), withModel(req.body, target.deployment.model));
  },
  frameEvent: sseFrame,
  countTokens: {
    buildRequest(req, target) {
      const body = withModel(req.body, target.deployment.model);
      return postJson(target, BASE, '/v1/messages/count_tokens', auth(req, target), body);
    },
    parse: (body) =>
      isRecord(body) && typeof body.input_tokens === 'number' && body.input_tokens >= 0 ? body.input_tokens : undefined,
  },
};
