/**
 * @module
 * Entries in the gateway's store (SQLite or PostgreSQL): the table cache_entries of the plugin's migrations. A put
 * rides on the request's settlement transaction when credit is in the chain (no write of its own), else is its own.
 */
import type { Db, Param, PendingWrite } from '../../../src/plugin';
import type { CacheBackend, PurgeFilter, StoredEntry } from './types';

const PUT =
  'INSERT INTO cache_entries (key, account_id, key_hash, model, operation, body, size, created_at, expires_at) ' +
  'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET account_id = excluded.account_id, ' +
  'key_hash = excluded.key_hash, body = excluded.body, size = excluded.size, created_at = excluded.created_at, ' +
  'expires_at = excluded.expires_at';

function putParams(e: StoredEntry): Param[] {
  return [e.key, e.accountId, e.keyHash, e.model, e.operation, e.text, e.text.length, e.createdAt, e.expiresAt];
}

/** The WHERE clause of a purge (at least `1 = 1`). */
export function purgeWhere(f: PurgeFilter): { sql: string; params: Param[] } {
  const where: string[] = ['1 = 1'];
  const params: Param[] = [];
  const add = (sql: string, v: Param | undefined) => {
    if (v === undefined) return;
    where.push(sql);
    params.push(v);
  };
  add('key = ?', f.entry);
  add('key_hash = ?', f.keyHash);
  add('account_id = ?', f.accountId);
  add('model = ?', f.model);
  add('created_at < ?', f.olderThan);
  return { sql: where.join(' AND '), params };
}

export class StoreBackend implements CacheBackend {
  readonly kind = 'store' as const;

  constructor(private readonly db: Db) {}

  async get(key: string, now: number): Promise<string | undefined> {
    const r = await this.db.get<{ body: string }>('SELECT body FROM cache_entries WHERE key = ? AND expires_at > ?', [
      key,
      now,
    ]);
    return r?.body;
  }

  async put(e: StoredEntry): Promise<void> {
    await this.db.write(PUT, putParams(e));
  }

  putWrite(e: StoredEntry): PendingWrite {
    return { sql: PUT, params: putParams(e) };
  }

  async purge(f: PurgeFilter): Promise<number> {
    const w = purgeWhere(f);
    return (await this.db.write(`DELETE FROM cache_entries WHERE ${w.sql}`, w.params)).changes;
  }

  async sweep(now: number): Promise<number> {
    return (
      await this.db.write(
        'DELETE FROM cache_entries WHERE key IN (SELECT key FROM cache_entries WHERE expires_at <= ? LIMIT 1000)',
        [now],
      )
    ).changes;
  }

  async close(): Promise<void> {}
}
