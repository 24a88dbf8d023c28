import type { Migration } from '../../../src/plugin';
import { narrowDailyMigration, rollupMigration, stagedRollupMigration } from './rollups';

/**
 * The console's usage analytics: `usage_daily` holds one row per UTC day, account, key,
 * model, provider, deployment and app, rolled up incrementally from `generations` behind a
 * watermark (gateway_meta 'usage_rollup_watermark'), so that a 30-day query reads at most
 * a few thousand aggregate rows instead of every record; `usage_daily_accounts` holds the
 * per-day, per-account totals that overview charts ask for, one row per account and day. Empty strings stand for "none"
 * (primary key columns cannot be NULL in PostgreSQL). Extra generation indexes serve the
 * console's activity filters with keyset pagination.
 *
 * Version 2: `console_sessions`, one row per console sign-in (the cookie holds a random token; only its SHA-256 is
 * kept), ended by sign-out, revocation, a rotated admin key or a disabled key (`ended_at`, `ended_reason`); and
 * `console_sso_logins`, the single sign-ons under way (state, PKCE verifier, nonce), each used once.
 *
 * Version 3 (issue 49): the aggregates are kept by the database as records are written (a trigger on generations,
 * ./rollups.ts), not rolled up behind a watermark: `usage_minute` for the live overview, outcome columns (timeouts,
 * cancelled, client errors) in the daily ones, the backfill from the records there are, and an index on each
 * record's outcome for the activity filter.
 *
 * Version 4 (issue 49): daily aggregates over fewer dimensions (per key, per model and deployment, per app and model),
 * kept by the same trigger and filled from usage_daily, so that no console grouping reads a row per key, model,
 * deployment and app; an index for the records list's status filter.
 *
 * Version 5: on SQLite, the trigger stages each record in `usage_pending` and the store engine folds that table into
 * the aggregates once a batch of writes (decision 0037), instead of eight upserts a record. PostgreSQL: unchanged.
 */
export const consoleMigrations: Migration[] = [
  {
    module: 'console',
    version: 1,
    description: 'usage_daily aggregates (and per-account totals); generation indexes for key and model filters',
    up: `
      CREATE TABLE usage_daily (
        day INTEGER NOT NULL,
        account_id TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        model TEXT NOT NULL,
        provider TEXT NOT NULL,
        deployment TEXT NOT NULL,
        app TEXT NOT NULL,
        requests BIGINT NOT NULL DEFAULT 0,
        errors BIGINT NOT NULL DEFAULT 0,
        prompt_tokens BIGINT NOT NULL DEFAULT 0,
        completion_tokens BIGINT NOT NULL DEFAULT 0,
        reasoning_tokens BIGINT NOT NULL DEFAULT 0,
        cached_tokens BIGINT NOT NULL DEFAULT 0,
        cost BIGINT NOT NULL DEFAULT 0,
        latency_ms_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
        PRIMARY KEY (day, account_id, key_hash, model, provider, deployment, app)
      );
      CREATE INDEX usage_daily_account ON usage_daily(account_id, day);
      CREATE TABLE usage_daily_accounts (
        day INTEGER NOT NULL,
        account_id TEXT NOT NULL,
        requests BIGINT NOT NULL DEFAULT 0,
        errors BIGINT NOT NULL DEFAULT 0,
        prompt_tokens BIGINT NOT NULL DEFAULT 0,
        completion_tokens BIGINT NOT NULL DEFAULT 0,
        reasoning_tokens BIGINT NOT NULL DEFAULT 0,
        cached_tokens BIGINT NOT NULL DEFAULT 0,
        cost BIGINT NOT NULL DEFAULT 0,
        latency_ms_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
        PRIMARY KEY (day, account_id)
      );
      CREATE INDEX generations_key ON generations(key_hash, created_at);
      CREATE INDEX generations_model ON generations(model, created_at);
    `,
  },
  {
    module: 'console',
    version: 2,
    description: 'console_sessions (server-side console sign-ins) and console_sso_logins (pending single sign-ons)',
    up: `
      CREATE TABLE console_sessions (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        subject TEXT NOT NULL,
        opened_with TEXT NOT NULL,
        account_id TEXT NOT NULL,
        label TEXT NOT NULL,
        csrf TEXT NOT NULL,
        address TEXT,
        created_at BIGINT NOT NULL,
        last_seen_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        ended_at BIGINT,
        ended_reason TEXT
      );
      CREATE INDEX console_sessions_open ON console_sessions(ended_at, expires_at);
      CREATE TABLE console_sso_logins (
        state_hash TEXT PRIMARY KEY,
        browser_hash TEXT NOT NULL,
        verifier TEXT NOT NULL,
        nonce TEXT NOT NULL,
        expires_at BIGINT NOT NULL
      );
    `,
  },
  {
    module: 'console',
    version: 3,
    description: 'aggregates kept by a trigger as records are written: usage_minute, outcome columns, backfill',
    up: { sqlite: rollupMigration('sqlite'), postgres: rollupMigration('postgres') },
  },
  {
    module: 'console',
    version: 4,
    description: 'daily aggregates per key, per model and deployment, per app and model; records status index',
    up: { sqlite: narrowDailyMigration('sqlite'), postgres: narrowDailyMigration('postgres') },
  },
  {
    module: 'console',
    version: 5,
    description: 'SQLite: records staged by the trigger and folded into the aggregates once a batch of writes',
    up: { sqlite: stagedRollupMigration('sqlite'), postgres: stagedRollupMigration('postgres') },
  },
];
