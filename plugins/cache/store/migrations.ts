import type { Migration } from '../../../src/plugin';

/**
 * The response cache's tables: its entries (when `backend: store`), and the cache setting of keys and accounts
 * (opt-in or opt-out, whatever the backend), so every replica reads the same ones.
 */
export const cacheMigrations: Migration[] = [
  {
    module: 'cache',
    version: 1,
    description: 'response cache entries and key/account settings',
    up: `
      CREATE TABLE cache_entries (
        key TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        key_hash TEXT,
        model TEXT NOT NULL,
        operation TEXT NOT NULL,
        body TEXT NOT NULL,
        size INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX cache_entries_expires ON cache_entries(expires_at);
      CREATE TABLE cache_settings (
        subject TEXT NOT NULL,
        id TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (subject, id)
      );
    `,
  },
];
