import type { Migration } from './index';

export const creditMigrations: Migration[] = [
  {
    module: 'credit',
    version: 1,
    description: 'credit reservations, ledger and generation records',
    up: `
      CREATE TABLE credit_reservations (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        key_hash TEXT,
        amount BIGINT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX credit_reservations_created ON credit_reservations(created_at);
      CREATE TABLE credit_ledger (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        key_hash TEXT,
        generation_id TEXT,
        kind TEXT NOT NULL,
        amount BIGINT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX credit_ledger_account ON credit_ledger(account_id, created_at);
      CREATE TABLE generations (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        key_hash TEXT,
        model TEXT NOT NULL,
        provider TEXT,
        deployment TEXT,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens INTEGER NOT NULL DEFAULT 0,
        cost BIGINT NOT NULL DEFAULT 0,
        latency_ms DOUBLE PRECISION,
        ttft_ms DOUBLE PRECISION,
        finish_reason TEXT,
        streamed INTEGER NOT NULL DEFAULT 0,
        cancelled INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL,
        error_code TEXT,
        app_referer TEXT,
        app_title TEXT,
        end_user TEXT,
        metadata TEXT,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX generations_account ON generations(account_id, created_at);
      CREATE INDEX generations_created ON generations(created_at);
    `,
  },
];
