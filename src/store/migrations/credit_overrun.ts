import type { Migration } from './index';

/** What an upstream reported beyond the reservation (nano-credits the operator carries) and why. */
export const creditOverrunMigrations: Migration[] = [
  {
    module: 'credit_overrun',
    version: 1,
    description: 'overrun beyond the reservation on generation records',
    up: `
      ALTER TABLE generations ADD COLUMN overrun BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE generations ADD COLUMN overrun_reason TEXT;
    `,
  },
];
