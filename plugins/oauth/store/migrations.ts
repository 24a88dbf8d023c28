import type { Migration } from '../../../src/plugin';

/**
 * The oauth plugin's tables. Module names and versions stay as the gateway first recorded them in schema_migrations,
 * when these lived in the core: `oauth` for the codes, `hostile` (after the test area that asked for it) for the
 * leak reports seen.
 */
export const oauthCodeMigrations: Migration[] = [
  {
    module: 'oauth',
    version: 1,
    description: 'OAuth PKCE authorization codes',
    up: `
      CREATE TABLE oauth_codes (
        code_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        challenge TEXT NOT NULL,
        method TEXT NOT NULL,
        site TEXT NOT NULL,
        credit_limit BIGINT,
        expires_at BIGINT NOT NULL,
        used INTEGER NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL
      );
    `,
  },
  {
    module: 'oauth',
    version: 2,
    description: 'oauth_codes.parent_hash: the key that approved (the minted key never outgrows it)',
    up: `ALTER TABLE oauth_codes ADD COLUMN parent_hash TEXT;`,
  },
];

export const leakReportsSeenMigrations: Migration[] = [
  {
    module: 'hostile',
    version: 1,
    description: 'Leaked-key reports already handled (replay protection)',
    up: `
      CREATE TABLE leak_reports_seen (
        report_id TEXT PRIMARY KEY,
        received_at BIGINT NOT NULL
      );
    `,
  },
];

export const oauthMigrations: Migration[] = [...oauthCodeMigrations, ...leakReportsSeenMigrations];
