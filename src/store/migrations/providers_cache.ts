import type { Migration } from './index';

/** Prompt-cache writes per generation (cache reads are `cached_tokens`, from the credit module). */
export const providersCacheMigrations: Migration[] = [
  {
    module: 'providers_cache',
    version: 1,
    description: 'generations.cache_write_tokens',
    up: `ALTER TABLE generations ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    module: 'providers_cache',
    version: 2,
    description: 'generations.attempts: the attempt log of a request that made more than one or was refused one',
    up: `ALTER TABLE generations ADD COLUMN attempts TEXT;`,
  },
];
