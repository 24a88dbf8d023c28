import type { Migration } from './index';

/**
 * Accounts and API keys. Money is an integer number of nano-credits (1e-9 credit) so
 * that sums are exact in SQLite and PostgreSQL alike.
 */
export const accountMigrations: Migration[] = [
  {
    module: 'accounts',
    version: 1,
    description: 'accounts and api keys',
    up: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT,
        credits BIGINT NOT NULL DEFAULT 0,
        usage BIGINT NOT NULL DEFAULT 0,
        reserved BIGINT NOT NULL DEFAULT 0,
        custom_pricing INTEGER NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE TABLE api_keys (
        hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        label TEXT NOT NULL,
        credit_limit BIGINT,
        limit_reset TEXT,
        window_start BIGINT NOT NULL DEFAULT 0,
        window_usage BIGINT NOT NULL DEFAULT 0,
        usage BIGINT NOT NULL DEFAULT 0,
        reserved BIGINT NOT NULL DEFAULT 0,
        disabled INTEGER NOT NULL DEFAULT 0,
        expires_at BIGINT,
        leaked_at BIGINT,
        leak_source TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE INDEX api_keys_account ON api_keys(account_id, created_at);
    `,
  },
];
