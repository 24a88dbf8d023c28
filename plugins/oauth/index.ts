import { createHash, randomBytes } from 'node:crypto';
import type Koa from 'koa';
import {
  AUTHENTICATE_KEY,
  bodyReader,
  creditsSchema as credits,
  definePlugin,
  errors,
  issueKey,
  keyJson,
  MAIL_SMTP,
  readForm,
  readRaw,
  smtpSchema,
  toNano,
} from '../../src/plugin';
import { bodies } from './generated/bodies';
import { consentPage } from './consent-page';
import { PKCE_VALUE, verifyPkce } from './pkce';
import { LeakHandler, signatureValid, type LeakConfig, type LeakReport } from './leaks';
import { ReportReplayGuard } from './replay';
import { checkCsrf, checkSameOrigin, issueCsrf } from './csrf';
import { LeakReportsSeen, OAuthCodeRepo } from './store/repo';
import { oauthMigrations } from './store/migrations';

export interface OAuthConfig {
  /** Origins (https://app.example) whose callback URLs may receive codes. */
  callback_allowlist: string[];
  /** Any http://localhost:<port> or 127.0.0.1 callback (for development). */
  allow_localhost: boolean;
  /** Accept code_challenge_method plain (S256 otherwise required). */
  allow_plain: boolean;
  code_ttl_seconds: number;
  leaks: LeakConfig;
}

const hashCode = (code: string) => createHash('sha256').update(code).digest('hex');

/**
 * OAuth PKCE key issuance (OpenRouter's flow: /auth consent page -> code -> POST
 * /v1/auth/keys) and the secret-scanning partner endpoint for leaked keys.
 */
export default definePlugin<OAuthConfig>({
  name: 'oauth',
  description: 'OAuth PKCE key issuance and leaked-key reports.',
  requires: ['principal'],
  store: { migrations: oauthMigrations, procedures: require.resolve('./store/procedures') },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      callback_allowlist: { type: 'array', items: { type: 'string', pattern: '^https?://[^/]+$' }, default: [] },
      allow_localhost: { type: 'boolean', default: false },
      allow_plain: { type: 'boolean', default: false },
      code_ttl_seconds: { type: 'integer', minimum: 10, maximum: 3600, default: 300 },
      leaks: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          public_keys: {
            type: 'array',
            default: [],
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['key_identifier', 'pem'],
              properties: { key_identifier: { type: 'string' }, pem: { type: 'string' } },
            },
          },
          hmac_secret: { type: 'string', minLength: 16 },
          replay_window_s: { type: 'integer', minimum: 1, maximum: 86400, default: 300 },
          smtp: smtpSchema,
        },
      },
    },
  },
  setup(config, services) {
    const { store, router } = services;
    const leaks = new LeakHandler(store, config.leaks, services.logger);
    // The leak notices' SMTP settings, for a plugin that sends mail without its own (limits' budget notices).
    if (config.leaks.smtp) services.shared.set(MAIL_SMTP, config.leaks.smtp);
    const replay = new ReportReplayGuard(new LeakReportsSeen(store.db), config.leaks.replay_window_s);
    const codes = new OAuthCodeRepo(store.db);

    /** The callback URL's origin, if codes may go there. */
    const allowedCallback = (raw: unknown): URL => {
      let url: URL;
      try {
        url = new URL(String(raw));
      } catch {
        throw errors.invalidRequest('callback_url must be an absolute URL', 'callback_url', 'invalid_callback_url');
      }
      const local =
        (url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]') &&
        url.protocol === 'http:';
      if (!(config.allow_localhost && local) && !config.callback_allowlist.includes(url.origin)) {
        throw errors.forbidden(
          'callback_not_allowed',
          `callback_url's origin ${url.origin} is not on this gateway's allowlist`,
        );
      }
      return url;
    };
    const checkMethod = (m: unknown): 'S256' | 'plain' => {
      const method = m === undefined || m === '' ? 'S256' : String(m);
      if (method === 'S256' || (method === 'plain' && config.allow_plain)) return method;
      throw errors.invalidRequest(
        `code_challenge_method must be S256${config.allow_plain ? ' or plain' : ''}`,
        'code_challenge_method',
        'invalid_code_challenge_method',
      );
    };
    const checkChallenge = (c: unknown): string => {
      if (typeof c !== 'string' || !PKCE_VALUE.test(c))
        throw errors.invalidRequest(
          'code_challenge must be 43-128 characters of A-Z a-z 0-9 - . _ ~',
          'code_challenge',
          'invalid_code_challenge',
        );
      return c;
    };

    /** The consent page for this callback and challenge, with a fresh CSRF token and the error to show, if any. */
    const showConsent = (ctx: Koa.Context, url: URL, challenge: string, method: string, error?: string) => {
      ctx.type = 'text/html; charset=utf-8';
      const view = { site: url.origin, callbackUrl: url.toString(), challenge, method, csrf: issueCsrf(ctx) };
      ctx.body = consentPage(error === undefined ? view : { ...view, error });
    };

    router.get('/auth', (ctx) => {
      const url = allowedCallback(ctx.query.callback_url);
      const challenge = checkChallenge(ctx.query.code_challenge);
      const method = checkMethod(ctx.query.code_challenge_method);
      // form-action also governs the redirect after the post: the callback's origin must be listed.
      ctx.set(
        'Content-Security-Policy',
        `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${url.origin}; frame-ancestors 'none'`,
      );
      showConsent(ctx, url, challenge, method);
    });

    router.post('/auth/consent', async (ctx) => {
      checkSameOrigin(ctx);
      const form = await readForm(ctx.req, 16 * 1024, '16kb');
      checkCsrf(ctx, form.get('csrf'));
      const url = allowedCallback(form.get('callback_url'));
      const challenge = checkChallenge(form.get('code_challenge'));
      const method = checkMethod(form.get('code_challenge_method'));
      if (form.get('action') !== 'approve') {
        url.searchParams.set('error', 'access_denied');
        ctx.redirect(url.toString());
        return;
      }
      const authenticateKey = services.shared.get(AUTHENTICATE_KEY);
      let accountId: string;
      try {
        if (!authenticateKey) throw errors.internal(); // oauth requires auth: the loader checks the order
        const p = await authenticateKey(form.get('key') ?? '');
        if (p.isAdmin) throw errors.forbidden('account_key_required', 'Use a key of your account, not the admin key');
        accountId = p.accountId;
      } catch (e) {
        ctx.status = 401;
        showConsent(ctx, url, challenge, method, `That key was not accepted: ${(e as Error).message}`);
        return;
      }
      const limit = consentLimit(form.get('limit'));
      const code = randomBytes(32).toString('base64url');
      await codes.create(
        hashCode(code),
        { accountId, challenge, method, site: url.origin, limit: limit === null ? null : toNano(limit) },
        config.code_ttl_seconds * 1000,
      );
      url.searchParams.set('code', code);
      ctx.redirect(url.toString());
    });

    const readExchange = bodyReader<{ code: string; code_verifier: string; code_challenge_method?: string }>(
      bodies.keyExchange,
    );
    router.post('/v1/auth/keys', async (ctx) => {
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
      const { raw, key } = await issueKey(store.keys, { accountId: c.accountId, name: c.site, limit: c.limit });
      ctx.body = { key: raw, user_id: c.accountId, data: keyJson(key) };
    });

    router.post('/v1/keys/leaked', async (ctx) => {
      const raw = await readRaw(ctx.req, 1024 * 1024, '1mb');
      if (!signatureValid(raw, ctx.req.headers, config.leaks))
        throw errors.unauthorized(
          'invalid_signature',
          'The report is not signed by a configured secret-scanning partner',
        );
      replay.checkTimestamp(ctx.get('x-signature-timestamp') || undefined);
      const reports = parseReports(raw);
      await replay.once(ctx.get('github-public-key-signature') || ctx.get('x-signature-256'));
      ctx.body = await leaks.handle(reports);
    });

    return { middleware: (_ctx, next) => next(), close: () => leaks.close() };
  },
});

/** The consent form's credit limit, held to the admin API's range for a key's limit. */
function consentLimit(raw: string | null): number | null {
  if (raw === null || raw.trim() === '') return null;
  const limit = Number(raw);
  if (!Number.isFinite(limit) || limit < credits.minimum || limit > credits.maximum) {
    throw errors.invalidRequest(
      `limit must be a number from ${credits.minimum} to ${credits.maximum}`,
      'limit',
      'invalid_field',
    );
  }
  return limit;
}

/** The partner's JSON: an array of {token, type, url, source}. */
function parseReports(raw: Buffer): LeakReport[] {
  let reports: unknown;
  try {
    reports = JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw errors.invalidJson((e as Error).message);
  }
  if (
    !Array.isArray(reports) ||
    !reports.every((r) => r && typeof r === 'object' && typeof (r as LeakReport).token === 'string')
  ) {
    throw errors.invalidRequest('The body must be an array of {token, type, url, source}', null, 'invalid_body');
  }
  return reports as LeakReport[];
}
