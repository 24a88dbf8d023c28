import type { Db } from './db';
import type { Migration } from './migrations/index';

/** Any constant: the advisory lock that serializes migrations between replicas (PostgreSQL). */
const MIGRATION_LOCK = 7_270_001;

/**
 * Apply every migration not yet recorded, in one transaction (DDL is transactional in
 * both databases). On PostgreSQL an advisory lock makes replicas that start together
 * take turns; the second finds everything applied. Returns the migrations applied.
 */
export async function migrate(db: Db, list: readonly Migration[]): Promise<Migration[]> {
  return db.tx(async (t) => {
    if (t.dialect === 'postgres') await t.get('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
    await t.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      module TEXT NOT NULL,
      version INTEGER NOT NULL,
      description TEXT NOT NULL,
      applied_at BIGINT NOT NULL,
      PRIMARY KEY (module, version)
    )`);
    const applied = new Set(
      (await t.all<{ module: string; version: number }>('SELECT module, version FROM schema_migrations')).map(
        (r) => `${r.module}@${Number(r.version)}`,
      ),
    );
    const pending = list.filter((m) => !applied.has(`${m.module}@${m.version}`));
    for (const m of pending) {
      await t.exec(m.up);
      await t.run('INSERT INTO schema_migrations (module, version, description, applied_at) VALUES (?, ?, ?, ?)', [
        m.module,
        m.version,
        m.description,
        Date.now(),
      ]);
    }
    return pending;
  });
}
