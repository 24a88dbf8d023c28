import type { Migration } from './index';

/** The audit log (src/store/audit.ts): append-only, newest first by its ordered id. */
export const auditMigrations: Migration[] = [
  {
    module: 'audit',
    version: 1,
    description: 'audit_log',
    up: `
      CREATE TABLE audit_log (
        id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        actor TEXT NOT NULL,
        role TEXT NOT NULL,
        source TEXT NOT NULL,
        address TEXT,
        action TEXT NOT NULL,
        target TEXT,
        before_value TEXT,
        after_value TEXT
      );
      CREATE INDEX audit_log_created ON audit_log (created_at);
      CREATE INDEX audit_log_target ON audit_log (target);
    `,
  },
];
