import type { Sql } from '../db';
import { coreMigrations } from './core';
import { accountMigrations } from './accounts';
import { creditMigrations } from './credit';
import { creditOverrunMigrations } from './credit_overrun';
import { kitMigrations } from './kit';
import { providersCacheMigrations } from './providers_cache';
import { reservationMigrations } from './reservations';
import { auditMigrations } from './audit';

/**
 * Versioned migrations, per module so that each part of the store evolves on its own.
 * A module's versions run in order, once, on SQLite and PostgreSQL alike; applied ones
 * are recorded in `schema_migrations`. Add a module by adding a file and one line here.
 */
export interface Migration {
  module: string;
  version: number;
  description: string;
  up: Sql;
}

export const migrations: readonly Migration[] = [
  ...coreMigrations,
  ...accountMigrations,
  ...creditMigrations,
  ...creditOverrunMigrations,
  ...kitMigrations,
  ...providersCacheMigrations,
  ...reservationMigrations,
  ...auditMigrations,
];
