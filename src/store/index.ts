import type { StoreConfig } from '../config/types';
import type { Db } from './db';
import { SqliteDb } from './sqlite-db';
import { PostgresDb } from './postgres-db';
import { migrate } from './migrate';
import { migrations } from './migrations/index';
import { AccountRepo } from './accounts';
import { KeyRepo } from './keys';
import { CreditRepo } from './credit';
import { GenerationRepo } from './generations';
import { ResponseRepo } from './responses';
import { OAuthCodeRepo } from './oauth-codes';

/**
 * The Store: one object over the configured database that the rest of the gateway
 * talks to. Repositories (accounts, keys, ledger, responses, generations) hang off it
 * and are written once against the Db seam, for SQLite and PostgreSQL alike.
 * `memory` is SQLite in memory: the same code, nothing on disk.
 */
export class Store {
  readonly accounts: AccountRepo;
  readonly keys: KeyRepo;
  readonly credit: CreditRepo;
  readonly generations: GenerationRepo;
  readonly responses: ResponseRepo;
  readonly oauthCodes: OAuthCodeRepo;

  constructor(readonly db: Db) {
    this.accounts = new AccountRepo(db);
    this.keys = new KeyRepo(db);
    this.credit = new CreditRepo(db);
    this.generations = new GenerationRepo(db);
    this.responses = new ResponseRepo(db);
    this.oauthCodes = new OAuthCodeRepo(db);
  }

  get driver(): Db['dialect'] {
    return this.db.dialect;
  }

  async ping(): Promise<void> {
    await this.db.get('SELECT 1 AS ok');
  }

  async getMeta(key: string): Promise<string | undefined> {
    const row = await this.db.get<{ value: string }>('SELECT value FROM gateway_meta WHERE key = ?', [key]);
    return row?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.db.run(
      'INSERT INTO gateway_meta (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      [key, value, Date.now()],
    );
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

export async function openDb(config: StoreConfig): Promise<Db> {
  switch (config.driver) {
    case 'sqlite':
      return new SqliteDb(config.path);
    case 'memory':
      return new SqliteDb(':memory:');
    case 'postgres':
      return new PostgresDb(config.url, config.pool_size);
  }
}

/** Open the configured database and bring its schema up to date. */
export async function openStore(config: StoreConfig): Promise<Store> {
  const db = await openDb(config);
  await migrate(db, migrations);
  return new Store(db);
}
