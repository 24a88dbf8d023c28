import { errors } from '../errors';
import { randomId } from '../ids';
import { spelled, type Db } from './db';
import { columnsWithHeld } from './engine/holds';
import { CreditsOutOfRange, MAX_NANO, nanoInRange, num } from './money';

export interface Account {
  id: string;
  name: string;
  email: string | null;
  /** nano-credits */
  credits: number;
  usage: number;
  reserved: number;
  customPricing: boolean;
  createdAt: number;
  updatedAt: number;
}

interface AccountRow {
  id: string;
  name: string;
  email: string | null;
  credits: unknown;
  usage: unknown;
  reserved: unknown;
  custom_pricing: unknown;
  created_at: unknown;
  updated_at: unknown;
}

/** The columns of an account; on SQLite `reserved` adds the credit its engine holds (src/store/engine/holds.ts). */
const COLUMNS = columnsWithHeld(
  'id, name, email, credits, usage',
  'account',
  'id',
  'custom_pricing, created_at, updated_at',
);
const BY_ID = spelled((d) => `SELECT ${COLUMNS[d]} FROM accounts WHERE id = ?`);

function toAccount(r: AccountRow): Account {
  return {
    id: r.id,
    name: r.name,
    email: r.email,
    credits: num(r.credits),
    usage: num(r.usage),
    reserved: num(r.reserved),
    customPricing: num(r.custom_pricing) === 1,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

/** Accounts: a name, an e-mail for leak notices, a credit balance (nano-credits). */
export class AccountRepo {
  constructor(private readonly db: Db) {}

  async create(input: {
    name: string;
    email?: string | null;
    credits?: number;
    customPricing?: boolean;
  }): Promise<Account> {
    const now = Date.now();
    const id = randomId('acct_');
    // Names are unique (accounts_name, migration account_names): the CLI and the docs name accounts by name.
    const r = await this.db.run(
      'INSERT INTO accounts (id, name, email, credits, usage, reserved, custom_pricing, created_at, updated_at) ' +
        'VALUES (?, ?, ?, ?, 0, 0, ?, ?, ?) ON CONFLICT (name) DO NOTHING',
      [id, input.name, input.email ?? null, input.credits ?? 0, input.customPricing ? 1 : 0, now, now],
    );
    if (r.changes === 0) {
      const taken = await this.byName(input.name);
      throw errors.accountNameTaken(input.name, taken?.id ?? '?');
    }
    return (await this.get(id)) as Account;
  }

  /** The account with this name (names are unique), or undefined. */
  async byName(name: string): Promise<Account | undefined> {
    const r = await this.db.get<{ id: string }>('SELECT id FROM accounts WHERE name = ?', [name]);
    return r ? this.get(r.id) : undefined;
  }

  async get(id: string): Promise<Account | undefined> {
    const r = await this.db.get<AccountRow>(BY_ID, [id]);
    return r ? toAccount(r) : undefined;
  }

  async list(limit: number, offset: number): Promise<Account[]> {
    return (
      await this.db.all<AccountRow>(
        spelled((d) => `SELECT ${COLUMNS[d]} FROM accounts ORDER BY created_at, id LIMIT ? OFFSET ?`),
        [limit, offset],
      )
    ).map(toAccount);
  }

  /**
   * Add (or, negative, remove) credit; returns the account, or undefined when it does not exist. Credits that would
   * leave 0 to MAX_NANO (./money.ts) throw CreditsOutOfRange, and nothing is written (checked in the same statement).
   */
  async addCredits(id: string, nano: number): Promise<Account | undefined> {
    if (!nanoInRange(Math.abs(nano))) throw new CreditsOutOfRange(0, nano);
    const r = await this.db.run(
      'UPDATE accounts SET credits = credits + ?, updated_at = ? ' +
        `WHERE id = ? AND credits + ? BETWEEN 0 AND ${MAX_NANO}`,
      [nano, Date.now(), id, nano],
    );
    if (r.changes > 0) return this.get(id);
    const a = await this.get(id);
    if (a) throw new CreditsOutOfRange(a.credits, nano);
    return undefined;
  }

  async setCustomPricing(id: string, allowed: boolean): Promise<boolean> {
    return (
      (
        await this.db.run('UPDATE accounts SET custom_pricing = ?, updated_at = ? WHERE id = ?', [
          allowed ? 1 : 0,
          Date.now(),
          id,
        ])
      ).changes === 1
    );
  }
}
