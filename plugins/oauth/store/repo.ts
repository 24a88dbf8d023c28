import type { Db } from '../../../src/plugin';
import { consumeProc, type OAuthCode } from './procedures';

export type { OAuthCode } from './procedures';

/** Single-use PKCE authorization codes, stored by hash. */
export class OAuthCodeRepo {
  constructor(private readonly db: Db) {}

  async create(codeHash: string, c: OAuthCode, ttlMs: number): Promise<void> {
    const now = Date.now();
    await this.db.run(
      'INSERT INTO oauth_codes (code_hash, account_id, challenge, method, site, credit_limit, expires_at, used, ' +
        'created_at, parent_hash) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)',
      [codeHash, c.accountId, c.challenge, c.method, c.site, c.limit, now + ttlMs, now, c.parentHash],
    );
  }

  /** Use a code once (./procedures.ts). */
  async consume(codeHash: string, now = Date.now()): Promise<OAuthCode | undefined> {
    return (await this.db.call(consumeProc, { codeHash, now })) ?? undefined;
  }
}

/** The leaked-key reports already handled, by id (replay protection). */
export class LeakReportsSeen {
  constructor(private readonly db: Db) {}

  /** Record a report by its id; false when it was seen before (a replay). */
  async firstSight(reportId: string, now = Date.now()): Promise<boolean> {
    const r = await this.db.run(
      'INSERT INTO leak_reports_seen (report_id, received_at) VALUES (?, ?) ON CONFLICT (report_id) DO NOTHING',
      [reportId, now],
    );
    return r.changes === 1;
  }
}
