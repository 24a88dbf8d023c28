import type { Migration } from './index';

export const oauthMigrations: Migration[] = [
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
];
