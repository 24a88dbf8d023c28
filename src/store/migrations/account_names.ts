import type { Migration } from './index';

/**
 * Account names are unique: the CLI, the docs and the console name accounts by name, and a second `team` (the quick
 * start run twice) made every later `--account team` fail. A store that already holds duplicates keeps its oldest
 * account of each name as it is and renames the others `<name> (<id>)`: unique, still recognisable, and nothing
 * else changes (keys, balances and records refer to the id).
 */
export const accountNameMigrations: Migration[] = [
  {
    module: 'account_names',
    version: 1,
    description: 'unique account names (later duplicates renamed "<name> (<id>)")',
    up: `
      UPDATE accounts SET name = name || ' (' || id || ')'
        WHERE EXISTS (SELECT 1 FROM accounts older WHERE older.name = accounts.name
          AND (older.created_at < accounts.created_at OR (older.created_at = accounts.created_at AND older.id < accounts.id)));
      CREATE UNIQUE INDEX accounts_name ON accounts(name);
    `,
  },
];
