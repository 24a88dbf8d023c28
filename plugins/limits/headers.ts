import type { ScopeLimits, ScopeUsage } from './counter-store';

/** A duration the way OpenAI writes its reset headers: `1s`, `6m0s`, `250ms`. */
export function resetText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${s % 60}s` : `${Math.floor(m / 60)}h${m % 60}m${s % 60}s`;
}

/**
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` for the scope that binds most
 * (least remaining) on each dimension; a dimension no scope limits gets no headers.
 */
export function rateLimitHeaders(scopes: readonly ScopeLimits[], usage: readonly ScopeUsage[]): Record<string, string> {
  const out: Record<string, string> = {};
  let req: { limit: number; remaining: number; reset: number } | undefined;
  let tok: typeof req;
  for (let i = 0; i < usage.length; i++) {
    const s = scopes[i];
    const u = usage[i];
    if (s.rpm > 0) {
      const remaining = Math.max(0, s.rpm - u.requests);
      if (!req || remaining < req.remaining) req = { limit: s.rpm, remaining, reset: u.requestsResetMs };
    }
    if (s.tpm > 0) {
      const remaining = Math.max(0, s.tpm - u.tokens);
      if (!tok || remaining < tok.remaining) tok = { limit: s.tpm, remaining, reset: u.tokensResetMs };
    }
  }
  if (req) {
    out['x-ratelimit-limit-requests'] = String(req.limit);
    out['x-ratelimit-remaining-requests'] = String(req.remaining);
    out['x-ratelimit-reset-requests'] = resetText(req.reset);
  }
  if (tok) {
    out['x-ratelimit-limit-tokens'] = String(tok.limit);
    out['x-ratelimit-remaining-tokens'] = String(tok.remaining);
    out['x-ratelimit-reset-tokens'] = resetText(tok.reset);
  }
  return out;
}
