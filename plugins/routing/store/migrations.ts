import type { Migration } from '../../../src/plugin';

/** Presets made through the admin API (gateway.yaml's are not stored), one row a preset, its body as JSON. */
export const routingMigrations: Migration[] = [
  {
    module: 'routing',
    version: 1,
    description: 'presets made through the admin API',
    up: `
      CREATE TABLE routing_presets (
        name TEXT PRIMARY KEY,
        body TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      );
    `,
  },
];
