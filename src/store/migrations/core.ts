import type { Migration } from './index';

export const coreMigrations: Migration[] = [
  {
    module: 'core',
    version: 1,
    description: 'gateway metadata (settings such as the generated admin key hash)',
    up: `CREATE TABLE IF NOT EXISTS gateway_meta (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL,
      updated_at BIGINT NOT NULL
    )`,
  },
];
