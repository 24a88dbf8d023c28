import type { Sql } from '../db';
import { coreMigrations } from './core';
import { accountMigrations } from './accounts';
import { creditMigrations } from './credit';
import { kitMigrations } from './kit';
import { providersCacheMigrations } from './providers_cache';
import { auditMigrations } from './audit';
import { keyRoleMigrations } from './key_roles';
import { keyParentMigrations } from './key_parents';
import { generationsCacheMigrations } from './generations_cache';
import { routingRecordMigrations } from './routing_record';
import { guardrailsMigrations } from './guardrails';
import { accountNameMigrations } from './account_names';
import { generationOutcomeMigrations } from './generation_outcomes';

/**
 * Versioned migrations, per module so that each part of the store evolves on its own.
 * A module's versions run in order, once, on SQLite and PostgreSQL alike; applied ones
 * are recorded in `schema_migrations`. These are the core's (add a module by adding a file and one line to the list
 * below); a plugin's come from its store extension (src/store/extensions.ts) and run after them.
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
  ...kitMigrations,
  ...providersCacheMigrations,
  ...auditMigrations,
  ...keyRoleMigrations,
  ...keyParentMigrations,
  ...generationsCacheMigrations,
  ...routingRecordMigrations,
  ...guardrailsMigrations,
  ...accountNameMigrations,
  ...generationOutcomeMigrations,
];
