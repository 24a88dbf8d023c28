import type { Migration } from '../../../src/plugin';

export const responseMigrations: Migration[] = [
  {
    module: 'responses',
    version: 1,
    description: 'stored responses',
    up: `
      CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        model TEXT NOT NULL,
        status TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT
      );
      CREATE INDEX responses_expires ON responses(expires_at);
    `,
  },
];
