import type { Migration } from './index';

/**
 * What the response cache (the cache plugin, issue 47) did for a request, in its generation record: `hit`, `miss` or
 * `bypass` (NULL without the plugin), the entry a hit served, and a semantic hit's similarity. Core columns, as the
 * generations table is the core's: a record is written the same way whether the plugin is in the chain or not.
 */
export const generationsCacheMigrations: Migration[] = [
  {
    module: 'generations_cache',
    version: 1,
    description: 'generations.cache, cache_entry, cache_similarity',
    up: `
      ALTER TABLE generations ADD COLUMN cache TEXT;
      ALTER TABLE generations ADD COLUMN cache_entry TEXT;
      ALTER TABLE generations ADD COLUMN cache_similarity DOUBLE PRECISION;
    `,
  },
];
