import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import {
  auditActor,
  constantTimeEqual,
  errors,
  hashKey,
  hasRole,
  randomId,
  recordAudit,
  type Role,
  type Store,
} from '../../src/plugin';

export const COOKIE = 'gw_console';

/** How a session was opened: the admin key, an account's key, or single sign-on. */
export type OpenedWith = 'admin_key' | 'key' | 'sso';

/** Who is signed in to the console: one row of `console_sessions`. */
export interface ConsoleSession {
  /** The session's public id (listed, revoked by it); never the cookie's token. */
  id: string;
  role: Role;
  /** The admin key's hash, the account key's hash, or the SSO subject (`iss` and `sub`). */
  subject: string;
  openedWith: OpenedWith;
  /** The account of an account session; `*` otherwise. */
  accountId: string;
  /** What the console shows: `admin`, the key's label, the SSO user's name or e-mail. */
  keyLabel: string;
  /** Reads every account (the viewer role and up): the scope the data pages use (params.ts Scope). */
  isAdmin: boolean;
  /** epoch ms */
  expires: number;
  createdAt: number;
  lastSeenAt: number;
  address: string | null;
  /** The CSRF token writes need (random per session; read from /console/api/me, which a cross-site page cannot). */
  csrf: string;
}

/** Who opens a session: the role, the subject and how. */
export interface Opener {
  role: Role;
  subject: string;
  openedWith: OpenedWith;
  accountId: string;
  label: string;
}

type Row = Record<string, unknown>;

/** Why a session ended, as recorded (`ended_reason`) and audited. */
export type EndReason = 'signed_out' | 'revoked' | 'admin_key_rotated' | 'key_disabled';

const TOUCH_MS = 60_000;
const ADMIN_HASH_TTL_MS = 5_000;

function toSession(r: Row): ConsoleSession {
  const role = r.role as Role;
  return {
    id: r.id as string,
    role,
    subject: r.subject as string,
    openedWith: r.opened_with as OpenedWith,
    accountId: r.account_id as string,
    keyLabel: r.label as string,
    isAdmin: hasRole({ isAdmin: false, role }, 'viewer'),
    expires: Number(r.expires_at),
    createdAt: Number(r.created_at),
    lastSeenAt: Number(r.last_seen_at),
    address: (r.address as string | null) ?? null,
    csrf: r.csrf as string,
  };
}

/** A session as the console and the admin API list it: never the token, the CSRF value or a key hash of the admin. */
export function sessionJson(s: ConsoleSession) {
  return {
    id: s.id,
    role: s.role,
    opened_with: s.openedWith,
    subject: s.openedWith === 'admin_key' ? 'admin' : s.subject,
    account_id: s.accountId === '*' ? null : s.accountId,
    label: s.keyLabel,
    address: s.address,
    created_at: new Date(s.createdAt).toISOString(),
    last_seen_at: new Date(s.lastSeenAt).toISOString(),
    expires_at: new Date(s.expires).toISOString(),
  };
}

/** The audit actor of a session: `admin`, `key:` and the key hash's start, or `sso:` and the subject. */
function actorOf(s: Pick<ConsoleSession, 'openedWith' | 'subject'>): string {
  if (s.openedWith === 'sso') return `sso:${s.subject}`;
  return auditActor({ isAdmin: s.openedWith === 'admin_key', keyHash: s.subject });
}

/** The principal shape the audit helper and requireRole read. */
export function principalOf(s: ConsoleSession) {
  return {
    keyHash: s.openedWith === 'sso' ? '' : s.subject,
    keyLabel: s.keyLabel,
    accountId: s.accountId,
    isAdmin: s.role === 'admin',
    role: s.role,
  };
}

/**
 * Server-side console sessions, in the store (`console_sessions`), so that every replica sees them and any can end
 * them. The cookie holds a random token (HttpOnly, SameSite=Strict, path /console); the row keeps its SHA-256 only.
 * Each use checks that the session is neither ended nor expired, that an admin-key session's key is still the admin
 * key (a rotated GATEWAY_ADMIN_KEY ends it) and that an account key's session's key is still valid (disabled,
 * expired or deleted ends it). Writes also need the X-CSRF-Token header and a same-origin Origin. Every session
 * opened or ended is audited (source `console`, or `sso` for single sign-on; never the token or a key).
 */
export class Sessions {
  private adminCache: { hash: string | undefined; until: number } | undefined;

  constructor(
    private readonly store: Store,
    private readonly ttlMs: number,
    /** The admin key's hash now: from GATEWAY_ADMIN_KEY / server.admin_key, else the generated one's in the store. */
    private readonly configuredAdminKey: string | undefined,
  ) {}

  /** The current admin key's hash (cached a few seconds when it comes from the store). */
  async adminHash(): Promise<string | undefined> {
    if (this.configuredAdminKey) return hashKey(this.configuredAdminKey);
    const now = Date.now();
    if (!this.adminCache || this.adminCache.until <= now)
      this.adminCache = { hash: await this.store.getMeta('admin_key_hash'), until: now + ADMIN_HASH_TTL_MS };
    return this.adminCache.hash;
  }

  /** Open a session, set its cookie, audit it. */
  async open(ctx: Koa.Context, who: Opener): Promise<ConsoleSession> {
    const token = randomBytes(32).toString('base64url');
    const now = Date.now();
    const s: ConsoleSession = {
      id: randomId('cs_'),
      role: who.role,
      subject: who.subject,
      openedWith: who.openedWith,
      accountId: who.accountId,
      keyLabel: who.label,
      isAdmin: hasRole({ isAdmin: false, role: who.role }, 'viewer'),
      expires: now + this.ttlMs,
      createdAt: now,
      lastSeenAt: now,
      address: ctx.ip || null,
      csrf: randomBytes(24).toString('base64url'),
    };
    await this.store.db.run(
      `INSERT INTO console_sessions (id, token_hash, role, subject, opened_with, account_id, label, csrf, address,
         created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        s.id,
        hashKey(token),
        s.role,
        s.subject,
        s.openedWith,
        s.accountId,
        s.keyLabel,
        s.csrf,
        s.address,
        now,
        now,
        s.expires,
      ],
    );
    ctx.cookies.set(COOKIE, token, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/console',
      maxAge: this.ttlMs,
      secure: ctx.secure,
      overwrite: true,
    });
    await this.audit(ctx, s, s, 'session.open', { after: sessionJson(s) });
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

  private async find(token: string): Promise<Row | undefined> {
    if (!token) return undefined;
    return this.store.db.get<Row>('SELECT * FROM console_sessions WHERE token_hash = ?', [hashKey(token)]);
  }

  /**
   * The session of this request, or a 401. Writes (not GET/HEAD) also need the CSRF header and a same-origin Origin.
   */
  async require(ctx: Koa.Context): Promise<ConsoleSession> {
    const row = await this.find(ctx.cookies.get(COOKIE) ?? '');
    if (!row) throw errors.unauthorized('console_session_required', 'Sign in to the console first');
    if (row.ended_at !== null && row.ended_at !== undefined)
      throw errors.unauthorized('console_session_revoked', 'This console session has ended; sign in again');
    const s = toSession(row);
    const now = Date.now();
    if (s.expires <= now)
      throw errors.unauthorized('console_session_expired', 'The console session has expired; sign in again');
    if (s.openedWith === 'admin_key') {
      const current = await this.adminHash();
      if (!current || !constantTimeEqual(current, s.subject)) {
        await this.end(ctx, s, 'admin_key_rotated', s);
        throw errors.unauthorized('console_session_revoked', 'The admin key this session was opened with has changed');
      }
    } else if (s.openedWith === 'key') {
      const k = await this.store.keys.get(s.subject);
      if (!k || k.disabled || (k.expiresAt !== null && k.expiresAt <= now)) {
        await this.end(ctx, s, 'key_disabled', s);
        throw errors.unauthorized('console_session_revoked', 'The key this session was opened with is no longer valid');
      }
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') checkWrite(ctx, s.csrf);
    if (now - s.lastSeenAt > TOUCH_MS)
      await this.store.db.run('UPDATE console_sessions SET last_seen_at = ? WHERE id = ?', [now, s.id]);
    return s;
  }

  /**
   * End a session (once: a second end is a no-op and returns false); audited with the actor who ended it (`by`: the
   * session itself when it signs out or is found revoked on use).
   */
  async end(ctx: Koa.Context, s: ConsoleSession, reason: EndReason, by: ConsoleSession | AuditBy): Promise<boolean> {
    const r = await this.store.db.run(
      'UPDATE console_sessions SET ended_at = ?, ended_reason = ? WHERE id = ? AND ended_at IS NULL',
      [Date.now(), reason, s.id],
    );
    if (r.changes === 0) return false;
    await this.audit(ctx, s, by, reason === 'revoked' ? 'session.revoke' : 'session.end', {
      before: sessionJson(s),
      after: { ended_reason: reason },
    });
    return true;
  }

  /** One open session by id (undefined when none, ended or expired). */
  async get(id: string): Promise<ConsoleSession | undefined> {
    const r = await this.store.db.get<Row>(
      'SELECT * FROM console_sessions WHERE id = ? AND ended_at IS NULL AND expires_at > ?',
      [id, Date.now()],
    );
    return r ? toSession(r) : undefined;
  }

  /**
   * The open sessions, newest first. Admin-key sessions opened with a key that is no longer the admin key are ended
   * here (audited, `admin_key_rotated`) rather than listed: they would be refused on their next use anyway.
   */
  async list(ctx: Koa.Context, limit = 200): Promise<ConsoleSession[]> {
    const rows = await this.store.db.all<Row>(
      'SELECT * FROM console_sessions WHERE ended_at IS NULL AND expires_at > ? ORDER BY created_at DESC, id LIMIT ?',
      [Date.now(), limit],
    );
    const current = await this.adminHash();
    const open: ConsoleSession[] = [];
    for (const s of rows.map(toSession)) {
      if (s.openedWith === 'admin_key' && s.subject !== current) await this.end(ctx, s, 'admin_key_rotated', s);
      else open.push(s);
    }
    return open;
  }

  private audit(
    ctx: Koa.Context,
    s: ConsoleSession,
    by: ConsoleSession | AuditBy,
    action: string,
    change: { before?: unknown; after?: unknown },
  ): Promise<string> {
    const actor = 'principal' in by ? by : { principal: principalOf(by), actor: actorOf(by), source: sourceOf(by) };
    return recordAudit(
      this.store,
      ctx,
      { ...actor.principal },
      {
        action,
        target: s.id,
        actor: actor.actor,
        source: actor.source,
        ...change,
      },
    );
  }
}

/** Who ended a session when it is not a console session (the admin API's caller). */
export interface AuditBy {
  principal:
    | ReturnType<typeof principalOf>
    | { keyHash: string; keyLabel: string; accountId: string; isAdmin: boolean; role?: Role };
  actor: string;
  source: 'admin_api' | 'console' | 'sso';
}

function sourceOf(s: ConsoleSession): 'console' | 'sso' {
  return s.openedWith === 'sso' ? 'sso' : 'console';
}

function checkWrite(ctx: Koa.Context, expected: string): void {
  const origin = ctx.get('origin');
  if (origin && origin !== `${ctx.protocol}://${ctx.host}`)
    throw errors.forbidden('cross_origin_refused', 'Console writes must come from the console itself');
  if (!constantTimeEqual(ctx.get('x-csrf-token'), expected))
    throw errors.forbidden('csrf_token_invalid', 'Missing or wrong X-CSRF-Token header');
}
