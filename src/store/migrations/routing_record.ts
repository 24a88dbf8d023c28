import type { Migration } from './index';

/**
 * What a generation record says of its route (issue 46): the model variant asked for, and zero-completion
 * insurance.
 */
export const routingRecordMigrations: Migration[] = [
  {
    module: 'routing_record',
    version: 1,
    description: 'generations.variant (model:floor, model:nitro) and generations.insured (not charged: no output)',
    up: `ALTER TABLE generations ADD COLUMN variant TEXT; ALTER TABLE generations ADD COLUMN insured INTEGER;`,
  },
];
