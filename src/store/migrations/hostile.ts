import type { Migration } from './index';

export const hostileMigrations: Migration[] = [
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
