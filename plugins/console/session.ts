import { createHmac, randomBytes } from 'node:crypto';
import type Koa from 'koa';
import { constantTimeEqual, errors, type Store } from '../../src/plugin';

export const COOKIE = 'gw_console';
const SECRET_META = 'console_session_secret';

/** Who is signed in to the console: the admin, or one account through one of its keys. */
export interface ConsoleSession {
  keyHash: string;
  keyLabel: string;
  accountId: string;
  isAdmin: boolean;
  /** epoch ms */
  expires: number;
  /** Per-session random value the CSRF token is derived from. */
  nonce: string;
}

/**
 * Stateless sessions: the cookie holds the session, signed with HMAC-SHA256 under a
 * secret kept in the store (so every replica accepts it). HttpOnly + SameSite=Strict;
 * writes also need the X-CSRF-Token header, derived from the session (the page reads it
 * from /console/api/me, which a cross-site page cannot). An account session is checked
 * against its key on every request: a disabled or deleted key ends it.
 */
export class Sessions {
  private constructor(
    private readonly secret: Buffer,
    private readonly store: Store,
    private readonly ttlMs: number,
  ) {}

  static async open(store: Store, ttlMs: number): Promise<Sessions> {
    let hex = await store.getMeta(SECRET_META);
    if (!hex) {
      await store.db.run(
        'INSERT INTO gateway_meta (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING',
        [SECRET_META, randomBytes(32).toString('hex'), Date.now()],
      );
      hex = (await store.getMeta(SECRET_META)) as string;
    }
    return new Sessions(Buffer.from(hex, 'hex'), store, ttlMs);
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }

  csrfToken(s: ConsoleSession): string {
    return this.sign(`csrf:${s.nonce}`);
  }

  issue(ctx: Koa.Context, who: Omit<ConsoleSession, 'expires' | 'nonce'>): ConsoleSession {
    const s: ConsoleSession = {
      ...who,
      expires: Date.now() + this.ttlMs,
      nonce: randomBytes(16).toString('base64url'),
    };
    const payload = Buffer.from(JSON.stringify(s)).toString('base64url');
    ctx.cookies.set(COOKIE, `${payload}.${this.sign(payload)}`, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/console',
      maxAge: this.ttlMs,
      secure: ctx.secure,
      overwrite: true,
    });
    return s;
  }

  clear(ctx: Koa.Context): void {
    ctx.cookies.set(COOKIE, '', {
      httpOnly: true,
      sameSite: 'strict',
      path: '/console',
      maxAge: 0,
      secure: ctx.secure,
      overwrite: true,
    });
  }

  /**
   * The session of this request, or a 401. Writes (not GET/HEAD) also need the CSRF header and a same-origin Origin.
   */
  async require(ctx: Koa.Context): Promise<ConsoleSession> {
    const raw = ctx.cookies.get(COOKIE) ?? '';
    const dot = raw.lastIndexOf('.');
    const payload = raw.slice(0, dot);
    if (dot <= 0 || !constantTimeEqual(raw.slice(dot + 1), this.sign(payload)))
      throw errors.unauthorized('console_session_required', 'Sign in to the console first');
    const s = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as ConsoleSession;
    if (s.expires <= Date.now())
      throw errors.unauthorized('console_session_expired', 'The console session has expired; sign in again');
    if (!s.isAdmin) {
      const k = await this.store.keys.get(s.keyHash);
      if (!k || k.disabled || (k.expiresAt !== null && k.expiresAt <= Date.now()))
        throw errors.unauthorized('console_session_revoked', 'The key this session was opened with is no longer valid');
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') checkWrite(ctx, this.csrfToken(s));
    return s;
  }
}

function checkWrite(ctx: Koa.Context, expected: string): void {
  const origin = ctx.get('origin');
  if (origin && origin !== `${ctx.protocol}://${ctx.host}`)
    throw errors.forbidden('cross_origin_refused', 'Console writes must come from the console itself');
  if (!constantTimeEqual(ctx.get('x-csrf-token'), expected))
    throw errors.forbidden('csrf_token_invalid', 'Missing or wrong X-CSRF-Token header');
}
