import { get, numOrNull, run, type Proc } from '../../../src/plugin/procedures';

export interface OAuthCode {
  accountId: string;
  challenge: string;
  method: 'S256' | 'plain';
  site: string;
  /** nano-credits, or null */
  limit: number | null;
  /** The key that approved (null: a code made before oauth@2, refused at the exchange). */
  parentHash: string | null;
}

/** Use a code once: the conditional update lets exactly one caller have it, and only before it expires. */
export const consumeProc: Proc<{ codeHash: string; now: number }, OAuthCode | null> = {
  name: 'oauth.consume',
  *body({ codeHash, now }) {
    const r = yield* get<Record<string, unknown>>(
      'SELECT account_id, challenge, method, site, credit_limit, parent_hash FROM oauth_codes ' +
        'WHERE code_hash = ? AND used = 0 ' +
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
      parentHash: (r.parent_hash as string | null) ?? null,
    };
  },
};
