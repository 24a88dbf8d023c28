import type { Migration } from './index';

/** The shared-state service plugins use (services.state) when it is backed by the store. */
export const kitMigrations: Migration[] = [
  {
    module: 'kit',
    version: 1,
    description: 'plugin shared counters and values',
    up: `
      CREATE TABLE plugin_state (
        key TEXT PRIMARY KEY,
        value TEXT,
        counter BIGINT NOT NULL DEFAULT 0,
        expires_at BIGINT
      );
      CREATE INDEX plugin_state_expiry ON plugin_state (expires_at);
    `,
  },
];
