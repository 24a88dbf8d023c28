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

/**
 * PostgreSQL: a reservation in one statement (docs/decisions/0042): the account's and the key's rows are locked for
 * that statement and its commit, not for the gateway's turns between statements, and its statements' plans are kept
 * by the session. A call repeated with the same reservation id (after a lost connection) reserves once. The window
 * expressions are those of ./reserve.ts (KEY_RESERVE), written out: a migration's text never changes.
 */
export const reserveFunctionMigrations: Migration[] = [
  {
    module: 'credit_calls',
    version: 1,
    description: 'PostgreSQL: credit_reserve(), a reservation in one statement',
    up: {
      sqlite: '',
      postgres: `
        CREATE OR REPLACE FUNCTION credit_reserve(p_id TEXT, p_account TEXT, p_key TEXT, p_amount BIGINT, p_now BIGINT,
          p_daily BIGINT, p_weekly BIGINT, p_monthly BIGINT)
        RETURNS TABLE (refused TEXT, available BIGINT) LANGUAGE plpgsql AS $reserve$
        BEGIN
          IF EXISTS (SELECT 1 FROM credit_reservations r WHERE r.id = p_id) THEN
            RETURN QUERY SELECT NULL::TEXT, NULL::BIGINT;
            RETURN;
          END IF;
          UPDATE accounts a SET reserved = a.reserved + p_amount
            WHERE a.id = p_account AND a.credits - a.usage - a.reserved >= p_amount;
          IF NOT FOUND THEN
            RETURN QUERY SELECT 'account'::TEXT,
              (SELECT a.credits - a.usage - a.reserved FROM accounts a WHERE a.id = p_account);
            RETURN;
          END IF;
          IF p_key IS NOT NULL THEN
            -- Every expression reads the row itself (not a join), so that a row updated meanwhile is read again.
            UPDATE api_keys k SET
              window_usage = CASE WHEN k.limit_reset IS NOT NULL AND k.window_start <
                CASE k.limit_reset WHEN 'daily' THEN p_daily WHEN 'weekly' THEN p_weekly ELSE p_monthly END
                THEN 0 ELSE k.window_usage END,
              window_start = CASE WHEN k.limit_reset IS NOT NULL AND k.window_start <
                CASE k.limit_reset WHEN 'daily' THEN p_daily WHEN 'weekly' THEN p_weekly ELSE p_monthly END
                THEN CASE k.limit_reset WHEN 'daily' THEN p_daily WHEN 'weekly' THEN p_weekly ELSE p_monthly END
                ELSE k.window_start END,
              reserved = k.reserved + p_amount
            WHERE k.hash = p_key AND (k.credit_limit IS NULL OR k.credit_limit - CASE WHEN k.limit_reset IS NOT NULL
              AND k.window_start < CASE k.limit_reset WHEN 'daily' THEN p_daily WHEN 'weekly' THEN p_weekly
                ELSE p_monthly END
              THEN 0 ELSE k.window_usage END - k.reserved >= p_amount);
            IF NOT FOUND THEN
              UPDATE accounts a SET reserved = a.reserved - p_amount WHERE a.id = p_account;
              RETURN QUERY SELECT 'key'::TEXT, (SELECT k.credit_limit - CASE WHEN k.limit_reset IS NOT NULL
                  AND k.window_start < CASE k.limit_reset WHEN 'daily' THEN p_daily WHEN 'weekly' THEN p_weekly
                    ELSE p_monthly END
                THEN 0 ELSE k.window_usage END - k.reserved FROM api_keys k WHERE k.hash = p_key);
              RETURN;
            END IF;
          END IF;
          INSERT INTO credit_reservations (id, account_id, key_hash, amount, created_at)
            VALUES (p_id, p_account, p_key, p_amount, p_now);
          RETURN QUERY SELECT NULL::TEXT, NULL::BIGINT;
        END $reserve$;
      `,
    },
  },
];

export const creditMigrations: Migration[] = [
  ...creditOverrunMigrations,
  ...reservationMigrations,
  ...reserveFunctionMigrations,
];
