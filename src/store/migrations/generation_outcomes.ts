import type { Migration } from './index';

/**
 * `generations.http_status`: the HTTP status a refused request was answered with (a light record of a 4xx: the auth,
 * limits, credit or a guard's refusal, or a bad request), NULL for a request that reached the chain's end. With
 * `status`, `error_code` and `cancelled` it gives each record its outcome (success, upstream error, timeout,
 * cancelled, client error: plugins/console/store/rollups.ts).
 */
export const generationOutcomeMigrations: Migration[] = [
  {
    module: 'generation_outcomes',
    version: 1,
    description: 'generations.http_status (light records of refused requests)',
    up: `ALTER TABLE generations ADD COLUMN http_status INTEGER;`,
  },
];
