import type { Migration } from './index';

/**
 * A key's role on the admin API (src/auth/roles.ts): `operator` or `viewer`; NULL is an ordinary account key. The
 * admin key has no row: its role is `admin`.
 */
export const keyRoleMigrations: Migration[] = [
  {
    module: 'key_roles',
    version: 1,
    description: 'api_keys.role',
    up: `ALTER TABLE api_keys ADD COLUMN role TEXT;`,
  },
];
