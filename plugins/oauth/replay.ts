import { createHash } from 'node:crypto';
import { errors } from '../../src/plugin';
import type { LeakReportsSeen } from './store/repo';

/**
 * Replay protection for leaked-key reports. A report is known by the digest of its signature
 * (the same signed body always carries the same one) and is handled once: a replay, even
 * after the key's owner re-enabled the key, is 409 and changes nothing. A report that carries
 * `X-Signature-Timestamp` (the HMAC form signs "<timestamp>.<body>") must also be recent.
 */
export class ReportReplayGuard {
  constructor(
    private readonly seen: LeakReportsSeen,
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
    if (!(await this.seen.firstSight(id, now))) throw errors.reportReplayed();
  }
}
