import { spelled, type Db, type Param } from './db';
import { columnsWithHeld } from './engine/holds';
import { num, numOrNull } from './money';

export type LimitReset = 'daily' | 'weekly' | 'monthly';

export interface ApiKey {
  hash: string;
  accountId: string;
  name: string;
  label: string;
  /** nano-credits per window (or for ever when limitReset is null); null = no limit */
  limit: number | null;
  limitReset: LimitReset | null;
  windowStart: number;
  windowUsage: number;
  usage: number;
  reserved: number;
  disabled: boolean;
  expiresAt: number | null;
  leakedAt: number | null;
  createdAt: number;
  updatedAt: number;
  /** Its role on the admin API (`operator`, `viewer`); null: an ordinary account key. */
  role: KeyRole | null;
  /** The key it was made from (an OAuth consent's approving key): refused with it. Null for any other key. */
  parentHash: string | null;
}

/** The roles a key may be given (the admin key alone is `admin`). */
export type KeyRole = 'operator' | 'viewer';

interface KeyRow {
  hash: string;
  account_id: string;
  name: string;
  label: string;
  credit_limit: unknown;
  limit_reset: LimitReset | null;
  window_start: unknown;
  window_usage: unknown;
  usage: unknown;
  reserved: unknown;
  disabled: unknown;
  expires_at: unknown;
  leaked_at: unknown;
  created_at: unknown;
  updated_at: unknown;
  role: KeyRole | null;
  parent_hash: string | null;
}

/** The columns of a key; on SQLite `reserved` adds the credit its engine holds (src/store/engine/holds.ts). */
const COLUMNS = columnsWithHeld(
  'hash, account_id, name, label, credit_limit, limit_reset, window_start, window_usage, usage',
  'key',
  'hash',
  'disabled, expires_at, leaked_at, created_at, updated_at, role, parent_hash',
);
const BY_HASH = spelled((d) => `SELECT ${COLUMNS[d]} FROM api_keys WHERE hash = ?`);

function toKey(r: KeyRow): ApiKey {
  return {
    hash: r.hash,
    accountId: r.account_id,
    name: r.name,
    label: r.label,
    limit: numOrNull(r.credit_limit),
    limitReset: r.limit_reset,
    windowStart: num(r.window_start),
    windowUsage: num(r.window_usage),
    usage: num(r.usage),
    reserved: num(r.reserved),
    disabled: num(r.disabled) === 1,
    expiresAt: numOrNull(r.expires_at),
    leakedAt: numOrNull(r.leaked_at),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    role: r.role ?? null,
    parentHash: r.parent_hash ?? null,
  };
}

/** Start (ms, UTC) of the limit window that contains `now`: midnight, Monday 00:00, or the 1st. */
export function windowStart(reset: LimitReset | null, now: number): number {
  if (!reset) return 0;
  const d = new Date(now);
  if (reset === 'daily') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (reset === 'monthly') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const sinceMonday = (d.getUTCDay() + 6) % 7;
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - sinceMonday);
}

/** Usage that counts against the limit now (0 once the window has rolled over). */
export function currentWindowUsage(k: ApiKey, now = Date.now()): number {
  return k.limitReset && windowStart(k.limitReset, now) > k.windowStart ? 0 : k.windowUsage;
}

export function limitRemaining(k: ApiKey, now = Date.now()): number | null {
  return k.limit === null ? null : Math.max(0, k.limit - currentWindowUsage(k, now) - k.reserved);
}

export interface KeyPatch {
  name?: string;
  disabled?: boolean;
  limit?: number | null;
  limitReset?: LimitReset | null;
  role?: KeyRole | null;
}

/** API keys, by the SHA-256 of the key (the key itself is never stored). */
export class KeyRepo {
  constructor(private readonly db: Db) {}

  async create(input: {
    hash: string;
    accountId: string;
    name: string;
    label: string;
    limit?: number | null;
    limitReset?: LimitReset | null;
    expiresAt?: number | null;
    role?: KeyRole | null;
    parentHash?: string | null;
  }): Promise<ApiKey> {
    const now = Date.now();
    await this.db.run(
      'INSERT INTO api_keys (hash, account_id, name, label, credit_limit, limit_reset, window_start, window_usage, ' +
        'usage, reserved, disabled, expires_at, created_at, updated_at, role, parent_hash) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, ?, ?, ?, ?, ?)',
      [
        input.hash,
        input.accountId,
        input.name,
        input.label,
        input.limit ?? null,
        input.limitReset ?? null,
        windowStart(input.limitReset ?? null, now),
        input.expiresAt ?? null,
        now,
        now,
        input.role ?? null,
        input.parentHash ?? null,
      ],
    );
    return (await this.get(input.hash)) as ApiKey;
  }

  async get(hash: string): Promise<ApiKey | undefined> {
    const r = await this.db.get<KeyRow>(BY_HASH, [hash]);
    return r ? toKey(r) : undefined;
  }

  async list(opts: { accountId?: string; limit: number; offset: number }): Promise<ApiKey[]> {
    const where = opts.accountId ? 'WHERE account_id = ?' : '';
    const params: Param[] = opts.accountId ? [opts.accountId, opts.limit, opts.offset] : [opts.limit, opts.offset];
    return (
      await this.db.all<KeyRow>(
        spelled((d) => `SELECT ${COLUMNS[d]} FROM api_keys ${where} ORDER BY created_at, hash LIMIT ? OFFSET ?`),
        params,
      )
    ).map(toKey);
  }

  async update(hash: string, patch: KeyPatch): Promise<ApiKey | undefined> {
    const sets: string[] = [];
    const params: Param[] = [];
    if (patch.name !== undefined) {
      sets.push('name = ?');
      params.push(patch.name);
    }
    if (patch.disabled !== undefined) {
      sets.push('disabled = ?');
      params.push(patch.disabled ? 1 : 0);
    }
    if (patch.limit !== undefined) {
      sets.push('credit_limit = ?');
      params.push(patch.limit);
    }
    if (patch.limitReset !== undefined) {
      sets.push('limit_reset = ?');
      params.push(patch.limitReset);
    }
    if (patch.role !== undefined) {
      sets.push('role = ?');
      params.push(patch.role);
    }
    sets.push('updated_at = ?');
    params.push(Date.now(), hash);
    const r = await this.db.run(`UPDATE api_keys SET ${sets.join(', ')} WHERE hash = ?`, params);
    return r.changes === 0 ? undefined : this.get(hash);
  }

  async markLeaked(hash: string, source: string): Promise<boolean> {
    const now = Date.now();
    return (
      (
        await this.db.run(
          'UPDATE api_keys SET disabled = 1, leaked_at = ?, leak_source = ?, updated_at = ? WHERE hash = ?',
          [now, source.slice(0, 2000), now, hash],
        )
      ).changes === 1
    );
  }

  async delete(hash: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM api_keys WHERE hash = ?', [hash])).changes === 1;
  }
}
