import type { Db } from './db';
import { num } from './money';

/**
 * The credit ledger: one row per charge, written by the credit plugin's settlements with the generation record, in
 * the core because the balances it accounts for are (accounts' and keys' usage: ./accounts.ts, ./keys.ts) and the
 * console, the CLI and the admin API read them.
 */
export class LedgerRepo {
  constructor(private readonly db: Db) {}

  /** The sum of an account's ledger rows (nano-credits). */
  async sum(accountId: string): Promise<number> {
    const r = await this.db.get<{ s: unknown }>(
      'SELECT COALESCE(SUM(amount), 0) AS s FROM credit_ledger WHERE account_id = ?',
      [accountId],
    );
    return num(r?.s);
  }
}
