import {
  num,
  numOrNull,
  writeParams,
  type Db,
  type PendingWrite,
  type StoredResponse,
  type StoredResponses,
} from '../../../src/plugin';

/** The upsert that stores `r`, for put() or for the request's one transaction (request-batch.ts). */
export function putStatement(r: StoredResponse): PendingWrite {
  return {
    sql:
      'INSERT INTO responses (id, account_id, model, status, body, created_at, expires_at) ' +
      'VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, body = excluded.body, ' +
      'expires_at = excluded.expires_at',
    params: [r.id, r.accountId, r.model, r.status, null, r.createdAt, r.expiresAt],
    json: { at: 4, value: r.body },
  };
}

/**
 * Stored responses, one row each, the served object kept as JSON. Offered to the core's /v1/responses
 * (previous_response_id) and the console as `services.shared` STORED_RESPONSES.
 */
export class ResponseRepo implements StoredResponses {
  constructor(private readonly db: Db) {}

  async put(r: StoredResponse): Promise<void> {
    const w = putStatement(r);
    const params = writeParams(w);
    if (!params) throw new Error(`response ${r.id}: its body does not serialize as JSON`);
    await this.db.write(w.sql, params);
  }

  async get(id: string, now = Date.now()): Promise<StoredResponse | undefined> {
    const r = await this.db.get<Record<string, unknown>>(
      'SELECT id, account_id, model, status, body, created_at, expires_at FROM responses WHERE id = ?',
      [id],
    );
    if (!r) return undefined;
    const expiresAt = numOrNull(r.expires_at);
    if (expiresAt !== null && expiresAt <= now) return undefined; // expired: as good as deleted, the sweep removes it
    return {
      id: r.id as string,
      accountId: r.account_id as string,
      model: r.model as string,
      status: r.status as string,
      body: JSON.parse(r.body as string) as Record<string, unknown>,
      createdAt: num(r.created_at),
      expiresAt,
    };
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM responses WHERE id = ?', [id])).changes === 1;
  }

  /** When the first stored response expires (ms), or null when none does. */
  async nextExpiry(): Promise<number | null> {
    const r = await this.db.get<{ at: unknown }>('SELECT MIN(expires_at) AS at FROM responses');
    return numOrNull(r?.at);
  }

  /** Delete up to `batch` expired responses; returns how many. */
  async deleteExpired(batch: number, now = Date.now()): Promise<number> {
    return (
      await this.db.run(
        'DELETE FROM responses WHERE id IN ' +
          '(SELECT id FROM responses WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?)',
        [now, batch],
      )
    ).changes;
  }
}
