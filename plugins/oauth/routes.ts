/**
 * @module
 * The oauth plugin's endpoints: the consent page and its form (GET /auth, POST /auth/consent), the code for key
 * exchange (POST /v1/auth/keys) and the secret-scanning partners' leaked-key reports (POST /v1/keys/leaked).
 */
import { createHash, randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import {
  AUTH_THROTTLE,
  AUTHENTICATE_KEY,
  bodyReader,
  errors,
  keyJson,
  readForm,
  readRaw,
  toNano,
  type SharedServices,
  type Store,
} from '../../src/plugin';
import { bodies } from './generated/bodies';
import { allowedCallback, checkChallenge, checkMethod, consentLimit } from './authorization';
import { consentPage } from './consent-page';
import { mintChildKey } from './parent';
import { checkCsrf, checkSameOrigin, issueCsrf } from './csrf';
import { parseReports, signatureValid, type LeakHandler } from './leaks';
import { verifyPkce } from './pkce';
import type { ReportReplayGuard } from './replay';
import type { OAuthConfig } from './schema';
import type { OAuthCodeRepo } from './store/repo';

export interface OAuthRouteDeps {
  config: Readonly<OAuthConfig>;
  store: Store;
  shared: SharedServices;
  codes: OAuthCodeRepo;
  leaks: LeakHandler;
  replay: ReportReplayGuard;
}

const hashCode = (code: string) => createHash('sha256').update(code).digest('hex');

export function registerOAuthRoutes(router: Router, deps: OAuthRouteDeps): void {
  registerConsentRoutes(router, deps);
  registerKeyExchange(router, deps);
  registerLeakReports(router, deps);
}

/** The consent page for this callback and challenge, with a fresh CSRF token and the error to show, if any. */
function showConsent(ctx: Koa.Context, url: URL, challenge: string, method: string, error?: string): void {
  ctx.type = 'text/html; charset=utf-8';
  const view = { site: url.origin, callbackUrl: url.toString(), challenge, method, csrf: issueCsrf(ctx) };
  ctx.body = consentPage(error === undefined ? view : { ...view, error });
}

/** GET /auth shows the consent page; POST /auth/consent approves (a code to the callback) or denies. */
function registerConsentRoutes(router: Router, { config, shared, codes }: OAuthRouteDeps): void {
  router.get('/auth', (ctx) => {
    const url = allowedCallback(config, ctx.query.callback_url);
    const challenge = checkChallenge(ctx.query.code_challenge);
    const method = checkMethod(config, ctx.query.code_challenge_method);
    // form-action also governs the redirect after the post: the callback's origin must be listed.
    ctx.set(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${url.origin}; frame-ancestors 'none'`,
    );
    showConsent(ctx, url, challenge, method);
  });

  router.post('/auth/consent', async (ctx) => {
    // Failed keys count against this address (the failed-auth throttle, limits'): past its limit, 429.
    const throttle = shared.get(AUTH_THROTTLE);
    throttle?.check(ctx.ip);
    checkSameOrigin(ctx);
    const form = await readForm(ctx.req, 16 * 1024, '16kb');
    checkCsrf(ctx, form.get('csrf'));
    const url = allowedCallback(config, form.get('callback_url'));
    const challenge = checkChallenge(form.get('code_challenge'));
    const method = checkMethod(config, form.get('code_challenge_method'));
    if (form.get('action') !== 'approve') {
      url.searchParams.set('error', 'access_denied');
      ctx.redirect(url.toString());
      return;
    }
    const authenticateKey = shared.get(AUTHENTICATE_KEY);
    let accountId: string;
    let parentHash: string;
    try {
      if (!authenticateKey) throw errors.internal(); // oauth requires auth: the loader checks the order
      const p = await authenticateKey(form.get('key') ?? '');
      if (p.isAdmin) throw errors.forbidden('account_key_required', 'Use a key of your account, not the admin key');
      accountId = p.accountId;
      parentHash = p.keyHash;
    } catch (e) {
      if ((e as { status?: number }).status === 401) throttle?.failed(ctx.ip);
      ctx.status = 401;
      showConsent(ctx, url, challenge, method, `That key was not accepted: ${(e as Error).message}`);
      return;
    }
    const limit = consentLimit(form.get('limit'));
    const code = randomBytes(32).toString('base64url');
    await codes.create(
      hashCode(code),
      { accountId, challenge, method, site: url.origin, limit: limit === null ? null : toNano(limit), parentHash },
      config.code_ttl_seconds * 1000,
    );
    url.searchParams.set('code', code);
    ctx.redirect(url.toString());
  });
}

/**
 * POST /v1/auth/keys: a code and its PKCE verifier for a new key of the approving account, never more than the key
 * that approved it (parent.ts). A wrong code or verifier counts against the address (the failed-auth throttle).
 */
function registerKeyExchange(router: Router, { store, shared, codes }: OAuthRouteDeps): void {
  const readExchange = bodyReader<{ code: string; code_verifier: string; code_challenge_method?: string }>(
    bodies.keyExchange,
  );
  router.post('/v1/auth/keys', async (ctx) => {
    const throttle = shared.get(AUTH_THROTTLE);
    throttle?.check(ctx.ip);
    try {
      await exchange(ctx);
    } catch (e) {
      if ((e as { status?: number }).status === 403) throttle?.failed(ctx.ip);
      throw e;
    }
  });
  const exchange = async (ctx: Koa.Context) => {
    const b = await readExchange(ctx);
    const c = await codes.consume(hashCode(b.code));
    // Unknown, used and expired codes look the same.
    if (!c) throw errors.forbidden('invalid_code', 'The code is unknown, already used or expired');
    if (b.code_challenge_method !== undefined && b.code_challenge_method !== c.method)
      throw errors.invalidRequest(
        'code_challenge_method does not match the one the code was issued for',
        'code_challenge_method',
        'invalid_code_challenge_method',
      );
    if (!verifyPkce(c.method, c.challenge, b.code_verifier))
      throw errors.forbidden('invalid_code_verifier', 'code_verifier does not match the code_challenge');
    const { raw, key } = await mintChildKey(store, shared, c);
    ctx.body = { key: raw, user_id: c.accountId, data: keyJson(key) };
  };
}

/**
 * POST /v1/keys/leaked: a signed, fresh, first-seen report disables the live keys it names. A report whose signature
 * fails counts against its address like any wrong secret (the failed-auth throttle): past the limit, 429.
 */
function registerLeakReports(router: Router, { config, leaks, replay, shared }: OAuthRouteDeps): void {
  router.post('/v1/keys/leaked', async (ctx) => {
    const throttle = shared.get(AUTH_THROTTLE);
    throttle?.check(ctx.ip);
    const raw = await readRaw(ctx.req, 1024 * 1024, '1mb');
    if (!signatureValid(raw, ctx.req.headers, config.leaks)) {
      throttle?.failed(ctx.ip);
      throw errors.unauthorized(
        'invalid_signature',
        'The report is not signed by a configured secret-scanning partner',
      );
    }
    replay.checkTimestamp(ctx.get('x-signature-timestamp') || undefined);
    const reports = parseReports(raw);
    await replay.once(ctx.get('github-public-key-signature') || ctx.get('x-signature-256'));
    ctx.body = await leaks.handle(reports);
  });
}
