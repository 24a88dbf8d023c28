/**
 * @module
 * The console's sign-in: POST /console/api/session (a key for a session cookie), DELETE (sign out), and GET
 * /console/api/me (who is signed in, and the CSRF token writes need).
 */
import type Router from '@koa/router';
import { AUTHENTICATE_KEY, bodyReader, errors, fromNano, type SharedServices, type Store } from '../../src/plugin';
import { bodies } from './generated/bodies';
import type { ConsoleSession, Sessions } from './session';
import { secure } from './secure';

const readSignIn = bodyReader<{ key: string }>(bodies.signIn);

export interface SessionRouteDeps {
  store: Store;
  shared: SharedServices;
  sessions: Sessions;
  need: (ctx: Parameters<Router.Middleware>[0]) => Promise<ConsoleSession>;
}

export function registerSessionRoutes(router: Router, { store, shared, sessions, need }: SessionRouteDeps): void {
  router.post('/console/api/session', async (ctx) => {
    secure(ctx);
    const check = shared.get(AUTHENTICATE_KEY);
    if (!check) throw errors.forbidden('auth_not_configured', 'The console needs the auth plugin to sign in');
    const origin = ctx.get('origin');
    if (origin && origin !== `${ctx.protocol}://${ctx.host}`)
      throw errors.forbidden('cross_origin_refused', 'Sign in from the console itself');
    const p = await check((await readSignIn(ctx)).key.trim());
    const s = sessions.issue(ctx, {
      keyHash: p.keyHash,
      keyLabel: p.keyLabel,
      accountId: p.accountId,
      isAdmin: p.isAdmin,
    });
    ctx.body = {
      data: {
        is_admin: s.isAdmin,
        account_id: s.isAdmin ? null : s.accountId,
        key_label: s.keyLabel,
        csrf_token: sessions.csrfToken(s),
      },
    };
  });
  router.delete('/console/api/session', async (ctx) => {
    await need(ctx);
    sessions.clear(ctx);
    ctx.body = { data: { signed_out: true } };
  });
  router.get('/console/api/me', async (ctx) => {
    const s = await need(ctx);
    const account = s.isAdmin ? undefined : await store.accounts.get(s.accountId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      data: {
        is_admin: s.isAdmin,
        key_label: s.keyLabel,
        csrf_token: sessions.csrfToken(s),
        account: account
          ? { id: account.id, name: account.name, credits: fromNano(account.credits), usage: fromNano(account.usage) }
          : null,
      },
    };
  });
}
