import type { Db, Param } from './db';
import { randomBytes } from 'node:crypto';

/** Where a change was made (`startup`: the gateway's first start: the generated admin key, the bootstrap account). */
export type AuditSource = 'admin_api' | 'console' | 'cli' | 'oauth' | 'sso' | 'startup';

/** One change: who (and in what role, from where), what, before and after. Never a secret (see redactAudit). */
export interface AuditEntry {
  /** The actor: a key's label or hash prefix, `admin`, an SSO subject, `cli:<user>@<host>` (who ran the CLI). */
  actor: string;
  role: string;
  source: AuditSource;
  /** The client address, when the change came over HTTP. */
  address?: string | null;
  /** Dotted verb: `account.create`, `key.update`, `credits.add`, `limits.set`, `session.revoke`, ... */
  action: string;
  /** What was changed: an account id, a key hash, a session id. */
  target?: string | null;
  before?: unknown;
  after?: unknown;
}

export interface AuditRecord extends Required<Omit<AuditEntry, 'before' | 'after'>> {
  id: string;
  createdAt: number;
  before: unknown;
  after: unknown;
}

export interface AuditQuery {
  since?: number;
  until?: number;
  actor?: string;
  action?: string;
  target?: string;
  source?: AuditSource;
  /** Records after this id (the id of the last record of the previous page, newest first: older ones). */
  before?: string;
  limit: number;
}

/** Field names whose values are secrets wherever they appear (the value is replaced, the field kept). */
const SECRET = /(^|_)(key|secret|password|token|authorization|cookie|api_key|client_secret)$/i;
/** Key hashes are not secrets, but a raw key is: anything shaped like one is cut whatever its field. */
const RAW_KEY = /\b(sk|gw|mg)-[A-Za-z0-9_-]{16,}/g;

/** A value as the audit log may keep it: secret fields replaced by "[redacted]", raw keys cut from strings. */
export function redactAudit(v: unknown, depth = 0): unknown {
  if (depth > 8) return '[deep]';
  if (typeof v === 'string') return v.replace(RAW_KEY, '[redacted]');
  if (Array.isArray(v)) return v.map((x) => redactAudit(x, depth + 1));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>))
    out[k] = SECRET.test(k) && k !== 'key_hash' && x !== null ? '[redacted]' : redactAudit(x, depth + 1);
  return out;
}

function json(v: unknown): string | null {
  return v === undefined ? null : JSON.stringify(redactAudit(v));
}

function parse(text: unknown): unknown {
  return typeof text === 'string' ? (JSON.parse(text) as unknown) : null;
}

type Row = Record<string, unknown>;

function toRecord(r: Row): AuditRecord {
  return {
    id: r.id as string,
    createdAt: Number(r.created_at),
    actor: r.actor as string,
    role: r.role as string,
    source: r.source as AuditSource,
    address: (r.address as string | null) ?? null,
    action: r.action as string,
    target: (r.target as string | null) ?? null,
    before: parse(r.before_value),
    after: parse(r.after_value),
  };
}

/**
 * The audit log: every change made through the admin API, the console, the CLI or OAuth, appended to the store (so
 * every replica writes to and reads the same log), listed newest first, deleted after the configured retention.
 */
export class AuditRepo {
  constructor(private readonly db: Db) {}

  async append(e: AuditEntry, now = Date.now()): Promise<string> {
    // Sorted by time whoever wrote it: the time (base 36, fixed width) first, then randomness against ties.
    const id = `aud_${now.toString(36).padStart(9, '0')}${randomBytes(6).toString('hex')}`;
    await this.db.write(
      'INSERT INTO audit_log ' +
        '(id, created_at, actor, role, source, address, action, target, before_value, after_value) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        id,
        now,
        e.actor.slice(0, 200),
        e.role,
        e.source,
        e.address ?? null,
        e.action,
        e.target ?? null,
        json(e.before),
        json(e.after),
      ],
    );
    return id;
  }

  async list(q: AuditQuery): Promise<AuditRecord[]> {
    const where: string[] = [];
    const params: Param[] = [];
    const add = (sql: string, v: Param | undefined) => {
      if (v === undefined) return;
      where.push(sql);
      params.push(v);
    };
    add('created_at >= ?', q.since);
    add('created_at < ?', q.until);
    add('actor = ?', q.actor);
    add('action = ?', q.action);
    add('target = ?', q.target);
    add('source = ?', q.source);
    add('id < ?', q.before);
    params.push(q.limit);
    const rows = await this.db.all<Row>(
      `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
      params,
    );
    return rows.map(toRecord);
  }

  /** Delete records older than `keepMs` (0 keeps them for ever); the number deleted. */
  async expire(keepMs: number, now = Date.now()): Promise<number> {
    if (keepMs <= 0) return 0;
    return (await this.db.write('DELETE FROM audit_log WHERE created_at < ?', [now - keepMs])).changes;
  }
}
