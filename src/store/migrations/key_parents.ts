import type { Migration } from './index';

/**
 * The key a key was made from (an OAuth consent's minted key: the approving key). NULL for a key made by the admin,
 * the CLI or an account's own settings. A key whose parent is disabled, deleted or expired is refused with it
 * (plugins/auth/authenticator.ts).
 */
export const keyParentMigrations: Migration[] = [
  {
    module: 'key_parents',
    version: 1,
    description: 'api_keys.parent_hash',
    up: `ALTER TABLE api_keys ADD COLUMN parent_hash TEXT;`,
  },
];
