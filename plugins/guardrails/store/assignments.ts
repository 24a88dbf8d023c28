/**
 * @module
 * Key and account policies, held in memory so a request never waits on the store: read whole at start, read again
 * every `refresh_ms` (another replica's change arrives within that), and changed at once here by this replica's admin
 * API. A few rows (one per key or account that has a policy), so the whole table is read each time.
 */
import { storeResting, type Db, type PluginServices } from '../../../src/plugin';

type Logger = PluginServices['logger'];

export type Subject = 'key' | 'account';

export class Assignments {
  private byKey = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  get(subject: Subject, id: string): string | undefined {
    return this.byKey.size === 0 ? undefined : this.byKey.get(`${subject}:${id}`);
  }

  async load(): Promise<void> {
    const rows = await this.db.all<{ subject: string; subject_id: string; policy: string }>(
      'SELECT subject, subject_id, policy FROM guardrail_assignments',
    );
    this.byKey = new Map(rows.map((r) => [`${r.subject}:${r.subject_id}`, r.policy]));
  }

  start(everyMs: number): void {
    this.timer = setInterval(() => {
      // Not while a SQLite store's worker rests (only a CLI command can have changed them): see storeResting.
      if (storeResting(this.db)) return;
      this.load().catch((err: unknown) => this.logger.warn({ err }, 'guardrails: reading key/account policies failed'));
    }, everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Set (or clear, with null) the policy of a key or an account. */
  async set(subject: Subject, id: string, policy: string | null): Promise<void> {
    if (policy === null) {
      await this.db.run('DELETE FROM guardrail_assignments WHERE subject = ? AND subject_id = ?', [subject, id]);
      this.byKey.delete(`${subject}:${id}`);
      return;
    }
    await this.db.run(
      'INSERT INTO guardrail_assignments (subject, subject_id, policy, updated_at) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (subject, subject_id) DO UPDATE SET policy = excluded.policy, updated_at = excluded.updated_at',
      [subject, id, policy, Date.now()],
    );
    this.byKey.set(`${subject}:${id}`, policy);
  }
}
