import { statSync } from 'node:fs';
import type { StoreConfig } from '../config/types';
import type { Store } from './index';
import { num } from './money';

/** A file's size in bytes, 0 when it does not exist (a WAL between checkpoints). */
export function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Bytes a SQLite store holds on disk: the database file plus its WAL (0 for other drivers). For the bench. */
export function storeFileBytes(config: StoreConfig): number {
  return config.driver === 'sqlite' ? fileSize(config.path) + fileSize(`${config.path}-wal`) : 0;
}

export interface TableStats {
  table: string;
  rows: number;
  /** Table and index pages (SQLite) or total relation size (PostgreSQL). */
  bytes: number;
}

export interface StoreStats {
  driver: StoreConfig['driver'];
  tables: TableStats[];
  /** Database bytes: the file (SQLite, without its WAL) or the schema's relations (PostgreSQL). */
  bytes: number;
  walBytes: number;
  /** Requests recorded (generation records kept). */
  requests: number;
  /**
   * Bytes per 1,000 requests: on average over what is kept, and since the previous `db stats` (null the first time).
   */
  perThousand: {
    average: number | null;
    sinceLast: number | null;
    lastAt: string | null;
    requestsSinceLast: number | null;
  };
}

/** Every table of the store (other modules add theirs), by name. */
async function tableNames(store: Store): Promise<string[]> {
  const rows = await store.db.all<{ name: string }>({
    sqlite: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    postgres: 'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename',
  });
  return rows.map((r) => r.name);
}
const SNAPSHOT = 'db_stats_snapshot';

async function tableBytes(store: Store, tables: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (store.driver === 'postgres') {
    for (const t of tables) {
      const r = await store.db.get<{ b: unknown }>('SELECT pg_total_relation_size(to_regclass(?)) AS b', [t]);
      out.set(t, num(r?.b));
    }
    return out;
  }
  // dbstat names tables and indexes; an index's pages count for its table.
  const rows = await store.db.all<{ tbl: string | null; name: string; b: unknown }>(
    'SELECT m.tbl_name AS tbl, s.name AS name, SUM(s.pgsize) AS b ' +
      'FROM dbstat s LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY s.name',
  );
  for (const r of rows) out.set(r.tbl ?? r.name, (out.get(r.tbl ?? r.name) ?? 0) + num(r.b));
  return out;
}

/**
 * Rows and bytes per table, and growth per 1,000 requests. Each call records a snapshot (in
 * gateway_meta) so that the next one can say what the requests in between cost.
 */
export async function storeStats(store: Store, config: StoreConfig, now = Date.now()): Promise<StoreStats> {
  const names = await tableNames(store);
  const bytesBy = await tableBytes(store, names);
  const tables: TableStats[] = [];
  for (const t of names) {
    const r = await store.db.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${t}`);
    tables.push({ table: t, rows: num(r?.n), bytes: bytesBy.get(t) ?? 0 });
  }
  const walBytes = config.driver === 'sqlite' ? fileSize(`${config.path}-wal`) : 0;
  const bytes = config.driver === 'sqlite' ? fileSize(config.path) : tables.reduce((a, t) => a + t.bytes, 0);
  const requests = tables.find((t) => t.table === 'generations')?.rows ?? 0;
  const raw = await store.getMeta(SNAPSHOT);
  const last = raw ? (JSON.parse(raw) as { at: number; bytes: number }) : null;
  let sinceLast: number | null = null;
  let requestsSinceLast: number | null = null;
  if (last) {
    requestsSinceLast = num(
      (await store.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM generations WHERE created_at > ?', [last.at]))?.n,
    );
    sinceLast = requestsSinceLast > 0 ? Math.round(((bytes + walBytes - last.bytes) / requestsSinceLast) * 1000) : null;
  }
  await store.setMeta(SNAPSHOT, JSON.stringify({ at: now, bytes: bytes + walBytes }));
  return {
    driver: config.driver,
    tables,
    bytes,
    walBytes,
    requests,
    perThousand: {
      average: requests > 0 ? Math.round((tables.reduce((a, t) => a + t.bytes, 0) / requests) * 1000) : null,
      sinceLast,
      lastAt: last ? new Date(last.at).toISOString() : null,
      requestsSinceLast,
    },
  };
}
