/**
 * @module
 * The oauth plugin: OAuth PKCE key issuance (OpenRouter's flow: the /auth consent page -> a code -> POST
 * /v1/auth/keys) and the secret-scanning partner endpoint for leaked keys (routes.ts, authorization.ts, leaks.ts). It
 * offers its leak notices' SMTP settings to a plugin that sends mail without its own (`mail.smtp`: limits' budget
 * notices). On the chat chain it does nothing (middleware.ts). See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth
 *   - oauth:
 *       callback_allowlist: [https://app.example]   # origins that may receive codes
 *       allow_localhost: false                      # any http://localhost:<port> callback (development only)
 *       allow_plain: false                          # code_challenge_method plain (S256 otherwise required)
 *       code_ttl_seconds: 300
 *       leaks:
 *         public_keys:                              # partners' ECDSA P-256 keys (GitHub secret scanning's shape)
 *           - { key_identifier: "...", pem: "-----BEGIN PUBLIC KEY-----..." }
 *         hmac_secret: ${LEAK_HMAC_SECRET}          # or a shared secret: X-Signature-256: sha256=<hex>
 *         replay_window_s: 300                      # how old an X-Signature-Timestamp may be
 *         smtp: { host: smtp.example, port: 587, secure: false, from: gateway@example, user: ..., pass: ... }
 *   - routing
 * ```
 */
import { definePlugin, FORGET_KEY, MAIL_SMTP } from '../../src/plugin';
import { LeakHandler } from './leaks';
import { oauthMiddleware } from './middleware';
import { ReportReplayGuard } from './replay';
import { registerOAuthRoutes } from './routes';
import { configSchema, type OAuthConfig } from './schema';
import { oauthMigrations } from './store/migrations';
import { LeakReportsSeen, OAuthCodeRepo } from './store/repo';

export default definePlugin<OAuthConfig>({
  name: 'oauth',
  description: 'OAuth PKCE key issuance and leaked-key reports.',
  requires: ['principal'],
  store: { migrations: oauthMigrations, procedures: require.resolve('./store/procedures') },
  configSchema,
  setup(config, services) {
    const { store } = services;
    const leaks = new LeakHandler(store, config.leaks, services.logger, (hash) =>
      services.shared.get(FORGET_KEY)?.(hash),
    );
    // The leak notices' SMTP settings, for a plugin that sends mail without its own (limits' budget notices).
    if (config.leaks.smtp) services.shared.set(MAIL_SMTP, config.leaks.smtp);
    const replay = new ReportReplayGuard(new LeakReportsSeen(store.db), config.leaks.replay_window_s);
    const codes = new OAuthCodeRepo(store.db);
    registerOAuthRoutes(services.router, { config, store, shared: services.shared, codes, leaks, replay });
    return { middleware: oauthMiddleware(), close: () => leaks.close() };
  },
});
