import { get, run, type Db, type Proc } from './db';
import { numOrNull } from './money';

export interface OAuthCode {
  accountId: string;
  challenge: string;
  method: 'S256' | 'plain';
  site: string;
  /** nano-credits, or null */
  limit: number | null;
}

/** Single-use PKCE authorization codes, stored by hash. */
export class OAuthCodeRepo {
  constructor(private readonly db: Db) {}

  async create(codeHash: string, c: OAuthCode, ttlMs: number): Promise<void> {
    const now = Date.now();
    await this.db.run(
      'INSERT INTO oauth_codes (code_hash, account_id, challenge, method, site, credit_limit, expires_at, used, ' +
        'created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)',
      [codeHash, c.accountId, c.challenge, c.method, c.site, c.limit, now + ttlMs, now],
    );
  }

  /** Use a code once: the conditional update lets exactly one caller have it, and only before it expires. */
  async consume(codeHash: string, now = Date.now()): Promise<OAuthCode | undefined> {
    return (await this.db.call(consumeProc, { codeHash, now })) ?? undefined;
  }
}

export const consumeProc: Proc<{ codeHash: string; now: number }, OAuthCode | null> = {
  name: 'oauth.consume',
  *body({ codeHash, now }) {
    const r = yield* get<Record<string, unknown>>(
      'SELECT account_id, challenge, method, site, credit_limit FROM oauth_codes WHERE code_hash = ? AND used = 0 ' +
        'AND expires_at > ?',
      [codeHash, now],
    );
    if (!r) return null;
    const used = yield* run('UPDATE oauth_codes SET used = 1 WHERE code_hash = ? AND used = 0', [codeHash]);
    if (used.changes !== 1) return null;
    return {
      accountId: r.account_id as string,
      challenge: r.challenge as string,
      method: r.method as 'S256' | 'plain',
      site: r.site as string,
      limit: numOrNull(r.credit_limit),
    };
  },
};
