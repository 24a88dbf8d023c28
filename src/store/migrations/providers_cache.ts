import type { Migration } from './index';

/** Prompt-cache writes per generation (cache reads are `cached_tokens`, from the credit module). */
export const providersCacheMigrations: Migration[] = [
  {
    module: 'providers_cache',
    version: 1,
    description: 'generations.cache_write_tokens',
    up: `ALTER TABLE generations ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;`,
  },
];
