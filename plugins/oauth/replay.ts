import { createHash } from 'node:crypto';
import { errors, type Store } from '../../src/plugin';

/**
 * Replay protection for leaked-key reports. A report is known by the digest of its signature
 * (the same signed body always carries the same one) and is handled once: a replay, even
 * after the key's owner re-enabled the key, is 409 and changes nothing. A report that carries
 * `X-Signature-Timestamp` (the HMAC form signs "<timestamp>.<body>") must also be recent.
 */
export class ReportReplayGuard {
  constructor(
    private readonly store: Store,
    private readonly windowS: number,
  ) {}

  /** Refuse a timestamp outside the window (either direction, for clock skew). */
  checkTimestamp(timestamp: string | undefined, now = Date.now()): void {
    if (timestamp === undefined) return;
    const t = Number(timestamp);
    if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - t) > this.windowS) {
      throw errors.unauthorized(
        'stale_report',
        `The report's timestamp is not within ${this.windowS} s of the gateway's clock`,
      );
    }
  }

  /** Record the report's id; a second time is a replay. */
  async once(signature: string, now = Date.now()): Promise<void> {
    const id = createHash('sha256').update(signature).digest('hex');
    const r = await this.store.db.run(
      'INSERT INTO leak_reports_seen (report_id, received_at) VALUES (?, ?) ON CONFLICT (report_id) DO NOTHING',
      [id, now],
    );
    if (r.changes !== 1) throw errors.reportReplayed();
  }
}
