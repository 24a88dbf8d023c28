import * as door from '../../../src/plugin';
import type { Db } from '../../../src/plugin';

const { orderedId } = door;

/** How a tool call ended: `error` the tool said so (isError), `failed` the call did not get an answer. */
export type Outcome = 'ok' | 'error' | 'failed' | 'refused' | 'cancelled' | 'timeout';

export interface CallRecord {
  keyHash: string | null;
  accountId: string | null;
  server: string;
  tool: string;
  durationMs: number;
  outcome: Outcome;
  errorCode: string | null;
  /** nano-credits charged */
  cost: number;
  requestId: string | null;
  /** JSON, only with record_payloads */
  arguments: string | null;
  result: string | null;
}

const CALL_COLUMNS =
  'id, created_at, key_hash, account_id, server, tool, duration_ms, outcome, error_code, cost, request_id, ' +
  'arguments, result';

export interface CallQuery {
  keyHash?: string;
  accountId?: string;
  server?: string;
  /** The tool's name on its server. */
  tool?: string;
  outcome?: string;
  limit: number;
  offset: number;
}

/** The call log: one row per tool call (refused ones too), written in the store's group commit. */
export class CallLog {
  constructor(private readonly db: Db) {}

  async add(c: CallRecord, now = Date.now()): Promise<string> {
    const id = orderedId('mcp_');
    await this.db.write(`INSERT INTO mcp_calls (${CALL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      id,
      now,
      c.keyHash,
      c.accountId,
      c.server,
      c.tool,
      Math.round(c.durationMs),
      c.outcome,
      c.errorCode,
      c.cost,
      c.requestId,
      c.arguments,
      c.result,
    ]);
    return id;
  }

  /** Newest first. */
  list(q: CallQuery): Promise<Array<Record<string, unknown>>> {
    const where: string[] = [];
    const params: Array<string | number> = [];
    for (const [col, v] of [
      ['key_hash', q.keyHash],
      ['account_id', q.accountId],
      ['server', q.server],
      ['tool', q.tool],
      ['outcome', q.outcome],
    ] as const)
      if (v !== undefined) {
        where.push(`${col} = ?`);
        params.push(v);
      }
    return this.db.all(
      `SELECT ${CALL_COLUMNS} FROM mcp_calls ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ` +
        'ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?',
      [...params, q.limit, q.offset],
    );
  }
}

export type Subject = 'key' | 'account';

/** The allowlists set through the admin API (they replace the YAML's entry for that key or account). */
export class AccessRepo {
  constructor(private readonly db: Db) {}

  async get(subject: Subject, id: string): Promise<string[] | null> {
    const r = await this.db.get<{ patterns: string }>(
      'SELECT patterns FROM mcp_access WHERE subject = ? AND subject_id = ?',
      [subject, id],
    );
    return r ? (JSON.parse(r.patterns) as string[]) : null;
  }

  async set(subject: Subject, id: string, patterns: string[] | null, now = Date.now()): Promise<void> {
    if (patterns === null) {
      await this.db.run('DELETE FROM mcp_access WHERE subject = ? AND subject_id = ?', [subject, id]);
      return;
    }
    await this.db.run(
      'INSERT INTO mcp_access (subject, subject_id, patterns, updated_at) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (subject, subject_id) DO UPDATE SET patterns = excluded.patterns, updated_at = excluded.updated_at',
      [subject, id, JSON.stringify(patterns), now],
    );
  }
}
