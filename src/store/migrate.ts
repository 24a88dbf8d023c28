import type { Db } from './db';
import type { Migration } from './migrations/index';

/** Apply every migration not yet recorded, each in its own transaction. Returns the ones applied. */
export async function migrate(db: Db, list: readonly Migration[]): Promise<Migration[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    module TEXT NOT NULL,
    version INTEGER NOT NULL,
    description TEXT NOT NULL,
    applied_at BIGINT NOT NULL,
    PRIMARY KEY (module, version)
  )`);
  const applied = new Set((await db.all<{ module: string; version: number }>('SELECT module, version FROM schema_migrations')).map((r) => `${r.module}@${Number(r.version)}`));
  const pending = [...list]
    .filter((m) => !applied.has(`${m.module}@${m.version}`))
    .sort((a, b) => (a.module === b.module ? a.version - b.version : 0));
  const done: Migration[] = [];
  for (const m of pending) {
    await db.tx(async (t) => {
      // Another replica may have applied it meanwhile (PostgreSQL): the primary key refuses a second record.
      const seen = await t.get('SELECT 1 AS x FROM schema_migrations WHERE module = ? AND version = ?', [m.module, m.version]);
      if (seen) return;
      await t.exec(m.up);
      await t.run('INSERT INTO schema_migrations (module, version, description, applied_at) VALUES (?, ?, ?, ?)', [m.module, m.version, m.description, Date.now()]);
      done.push(m);
    });
  }
  return done;
}
