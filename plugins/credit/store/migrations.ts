import type { Migration } from '../../../src/plugin';

/**
 * The credit plugin's migrations (module names and versions as the gateway recorded them when these lived in the
 * core). The tables of the ledger and generation records, and the accounts' and keys' reserved columns, are the
 * core's (its `credit` and `accounts` modules): credit_reservations among them, since one migration made them all.
 */

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

/**
 * Every request writes a reservation row and deletes it when it settles, so each b-tree the row lives in is a page
 * written to the WAL twice per request. The created_at index goes (the only query by age, releasing reservations
 * left by a crash, scans a table that holds only the requests in flight), and on SQLite the table is clustered on
 * its primary key (WITHOUT ROWID): one b-tree instead of a table plus the primary key's index.
 */
export const reservationMigrations: Migration[] = [
  {
    module: 'reservations',
    version: 1,
    description: 'credit reservations in one b-tree: no created_at index; WITHOUT ROWID on SQLite',
    up: {
      sqlite: `
        CREATE TABLE credit_reservations_lean (
          id TEXT PRIMARY KEY,
          account_id TEXT NOT NULL,
          key_hash TEXT,
          amount BIGINT NOT NULL,
          created_at BIGINT NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO credit_reservations_lean (id, account_id, key_hash, amount, created_at)
          SELECT id, account_id, key_hash, amount, created_at FROM credit_reservations;
        DROP TABLE credit_reservations;
        ALTER TABLE credit_reservations_lean RENAME TO credit_reservations;
      `,
      postgres: `DROP INDEX IF EXISTS credit_reservations_created;`,
    },
  },
];

export const creditMigrations: Migration[] = [...creditOverrunMigrations, ...reservationMigrations];
