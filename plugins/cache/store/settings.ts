/**
 * @module
 * Whether a key or an account uses the response cache (opt-in or opt-out), set through the admin API or the CLI and
 * kept in the table cache_settings. Every replica reads them all into memory and again every `settings_refresh_ms`
 * (a change made here is seen here at once): a request reads a map, never the store.
 */
import { storeResting, type Db } from '../../../src/plugin';

export type SettingSubject = 'key' | 'account';

export class CacheSettings {
  private byKey = new Map<string, boolean>();
  private byAccount = new Map<string, boolean>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly db: Db) {}

  /** Read them all now, then every `everyMs`. */
  async start(everyMs: number, onError: (e: unknown) => void): Promise<void> {
    await this.load();
    // Not while a SQLite store's worker rests (only a CLI command can have changed them): see storeResting.
    this.timer = setInterval(() => void (storeResting(this.db) || this.load().catch(onError)), everyMs);
    this.timer.unref();
  }

  private async load(): Promise<void> {
    const rows = await this.db.all<{ subject: string; id: string; enabled: unknown }>(
      'SELECT subject, id, enabled FROM cache_settings',
    );
    const keys = new Map<string, boolean>();
    const accounts = new Map<string, boolean>();
    for (const r of rows) (r.subject === 'key' ? keys : accounts).set(r.id, Number(r.enabled) === 1);
    this.byKey = keys;
    this.byAccount = accounts;
  }

  /** The key's own setting, else its account's, else undefined (the config's `keys` default applies). */
  enabledFor(keyHash: string | undefined, accountId: string | undefined): boolean | undefined {
    return (
      (keyHash === undefined ? undefined : this.byKey.get(keyHash)) ??
      (accountId === undefined ? undefined : this.byAccount.get(accountId))
    );
  }

  get(subject: SettingSubject, id: string): boolean | null {
    return (subject === 'key' ? this.byKey : this.byAccount).get(id) ?? null;
  }

  /** Set (true: opt in, false: opt out) or clear (null: the default) a key's or an account's setting. */
  async set(subject: SettingSubject, id: string, enabled: boolean | null): Promise<void> {
    if (enabled === null) await this.db.write('DELETE FROM cache_settings WHERE subject = ? AND id = ?', [subject, id]);
    else
      await this.db.write(
        'INSERT INTO cache_settings (subject, id, enabled, updated_at) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT (subject, id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at',
        [subject, id, enabled ? 1 : 0, Date.now()],
      );
    const map = subject === 'key' ? this.byKey : this.byAccount;
    if (enabled === null) map.delete(id);
    else map.set(id, enabled);
  }

  close(): void {
    clearInterval(this.timer);
  }
}
