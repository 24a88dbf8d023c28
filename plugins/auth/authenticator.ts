import type Koa from 'koa';
import {
  AUTH_THROTTLE,
  callAsync,
  checkKey,
  constantTimeEqual,
  errors,
  hashKey,
  keyLabel,
  type GatewayError,
  type Principal,
  type SharedServices,
  type Store,
} from '../../src/plugin';

export interface AuthenticatorOptions {
  /** How long a lookup (found or not) is trusted; bounds how late a disable reaches this replica. */
  cacheTtlMs: number;
  cacheMax: number;
  /** SHA-256 of the admin key. */
  adminHash: string;
}

/** A lookup as cached, with the key's hash (what forget() names it by). */
type Cached = { until: number; hash: string; principal?: Principal; error?: GatewayError; parents?: string[] };

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * Turns an Authorization header into a Principal: format and checksum first (no store
 * access for a mistyped key), then a short-lived cache, then the store. Every failure is
 * a 401 with its own code; none says whether some other key exists.
 */
export class Authenticator {
  /**
   * Lookups by the key as sent: a key seen within the TTL skips its hash, checksum and admin comparison
   * (docs/decisions/0032-plugin-hot-path-shapes.md). The admin key is never cached (it is checked before anything
   * is), and the map is bounded (cacheMax).
   */
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly store: Store,
    private readonly opts: AuthenticatorOptions,
  ) {}

  /** Not async, as fromKey: a request's key is checked twice (before its body and in the chain), from the cache. */
  fromHeader(header: string | undefined): Promise<Principal> {
    if (!header)
      return Promise.reject(
        errors.unauthorized('missing_api_key', 'No API key: send it as "Authorization: Bearer <key>"'),
      );
    const m = BEARER.exec(header);
    if (!m)
      return Promise.reject(
        errors.unauthorized('malformed_authorization', 'The Authorization header must be "Bearer <key>"'),
      );
    return this.fromKey(m[1]);
  }

  /** A key found in the cache is answered without an async frame (one promise, already settled). */
  fromKey(key: string): Promise<Principal> {
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) {
      if (hit.error) return Promise.reject(hit.error);
      return callAsync(() => Promise.resolve(this.check(hit.principal as Principal, now)));
    }
    return this.lookup(key, now);
  }

  private async lookup(key: string, now: number): Promise<Principal> {
    const hash = hashKey(key);
    if (constantTimeEqual(hash, this.opts.adminHash))
      return { keyHash: hash, keyLabel: 'admin', accountId: '*', isAdmin: true };
    const shape = checkKey(key);
    if (shape === 'malformed')
      throw errors.unauthorized('malformed_api_key', "The API key is not in the gateway's format (sk-gw-...)");
    if (shape === 'bad_checksum')
      throw errors.unauthorized('invalid_api_key_checksum', 'The API key is mistyped: its checksum does not match');
    const row = await this.store.keys.get(hash);
    // A key made from another (OAuth) is refused with it: its parents up the chain, any disabled, deleted or expired.
    const parents: string[] = [];
    let orphaned = false;
    for (let up = row?.parentHash; up && !orphaned && parents.length < 8;) {
      parents.push(up);
      const p = await this.store.keys.get(up);
      orphaned = !p || p.disabled || (p.expiresAt !== null && p.expiresAt <= now);
      up = p?.parentHash;
    }
    let entry: Cached;
    if (!row)
      entry = {
        until: now + this.opts.cacheTtlMs,
        hash,
        error: errors.unauthorized('invalid_api_key', 'The API key is not valid'),
      };
    else {
      entry = {
        until: now + this.opts.cacheTtlMs,
        hash,
        parents,
        principal: {
          keyHash: hash,
          keyLabel: keyLabel(key),
          accountId: row.accountId,
          isAdmin: false,
          disabled: row.disabled || orphaned,
          expiresAt: row.expiresAt,
          keyName: row.name,
          // A key made with a role reaches the admin API with that role's rights (undefined: `account`).
          ...(row.role ? { role: row.role } : {}),
        },
      };
    }
    if (this.cache.size >= this.opts.cacheMax) this.cache.clear();
    this.cache.set(key, entry);
    if (entry.error) throw entry.error;
    return this.check(entry.principal as Principal, now);
  }

  private check(p: Principal, now: number): Principal {
    if (p.disabled) throw errors.unauthorized('api_key_disabled', 'The API key is disabled');
    if (typeof p.expiresAt === 'number' && p.expiresAt <= now)
      throw errors.unauthorized('api_key_expired', 'The API key has expired');
    return p;
  }

  /** Forget a key (and the keys made from it) at once on this replica (after PATCH/DELETE); others within the TTL. */
  forget(hash: string): void {
    for (const [key, entry] of this.cache)
      if (entry.hash === hash || entry.parents?.includes(hash)) this.cache.delete(key);
  }

  authenticate = (ctx: Koa.Context): Promise<Principal> => this.fromHeader(ctx.get('authorization') || undefined);
}

/** Where a request keeps its authentication (in ctx.state, by a key no other plugin can spell). */
const AUTHENTICATED = Symbol('auth.authenticated');
interface Authenticated {
  /** The Authorization header it was for. */
  header: string;
  principal: Promise<Principal>;
}

/**
 * `plain` with failed-authentication throttling per client address, when a plugin (limits) registered one, and one
 * answer a request and header: the chain's middleware asks again what the check before the body asked
 * (src/http/early-auth.ts), and gets that answer, not a second lookup and throttle check. A plugin before this one
 * that changed the header gets the new header checked.
 */
export function oneAnswerARequest(
  plain: (ctx: Koa.Context) => Promise<Principal>,
  shared: SharedServices,
): (ctx: Koa.Context) => Promise<Principal> {
  const throttled = (ctx: Koa.Context): Promise<Principal> => {
    const t = shared.get(AUTH_THROTTLE);
    if (!t) return plain(ctx);
    return callAsync(() => {
      t.check(ctx.ip);
      return plain(ctx);
    }).catch((e: unknown) => {
      if ((e as { status?: number }).status === 401) t.failed(ctx.ip);
      throw e;
    });
  };
  return (ctx: Koa.Context) => {
    const header = ctx.get('authorization');
    const state = ctx.state as unknown as Record<symbol, Authenticated | undefined>;
    const seen = state[AUTHENTICATED];
    if (seen !== undefined && seen.header === header) return seen.principal;
    const principal = throttled(ctx);
    state[AUTHENTICATED] = { header, principal };
    return principal;
  };
}
