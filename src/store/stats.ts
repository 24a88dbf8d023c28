import { statSync } from 'node:fs';
import type { StoreConfig } from '../config/types';

function size(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Bytes a SQLite store holds on disk: the database file plus its WAL (0 for other drivers). For the bench. */
export function storeFileBytes(config: StoreConfig): number {
  return config.driver === 'sqlite' ? size(config.path) + size(`${config.path}-wal`) : 0;
}
