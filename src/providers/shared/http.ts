import type { UpstreamRequest, UpstreamTarget } from '../types';

/** Response headers as the transport hands them to mapError. */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/** Join an api_base and a path without doubling or losing the slash. */
export function joinUrl(base: string, path: string): string {
  if (base.endsWith('/')) return base + path.replace(/^\//, '');
  return base + (path.startsWith('/') ? path : `/${path}`);
}

/**
 * Standard headers plus the provider's and the request's extra ones; the auth header is
 * set last so nothing can replace it.
 */
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

/** A JSON POST to `path` under the provider's api_base (or the adapter's default base). */
export function postJson(
  target: UpstreamTarget,
  defaultBase: string,
  path: string,
  auth: Record<string, string>,
  body: unknown,
): UpstreamRequest {
  return {
    url: joinUrl(target.provider.api_base ?? defaultBase, path),
    method: 'POST',
    headers: upstreamHeaders(target, auth),
    body: JSON.stringify(body),
  };
}

/** The provider's options overlaid with the deployment's (a deployment's own setting wins). */
export function targetOptions(target: UpstreamTarget): Record<string, unknown> {
  return { ...target.provider.options, ...target.deployment.options };
}

/** Seconds from a Retry-After header (delta-seconds or HTTP date). */
export function retryAfterSeconds(headers: UpstreamHeaders): number | undefined {
  const raw = headers['retry-after'];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (!v) return undefined;
  const n = Number(v);
  if (Number.isFinite(n) && n >= 0) return n;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, (t - Date.now()) / 1000);
}

/** A plain-text error body, cut to what an error message can carry; '' for anything else. */
export function textBody(body: unknown): string {
  return typeof body === 'string' ? body.slice(0, 300) : '';
}
