import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../src/store/index';
import { migrations as coreMigrations } from '../../src/store/migrations/index';
import { builtinExtensions } from '../helpers/store';
import { freshPostgresUrl, POSTGRES_URL } from '../helpers/postgres';

/**
 * A SQLite store as the code before plugins owned their data (commit 6e5c74e, issue 42 step 3) made it: every object
 * of its schema as SQLite recorded it, and its schema_migrations rows (test/fixtures/store-schema-6e5c74e.json, dumped
 * from a store that code opened).
 */
interface Dump {
  objects: Array<{ type: 'table' | 'index'; name: string; sql: string }>;
  migrations: Array<{ module: string; version: number; description: string }>;
}
const dump = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'store-schema-6e5c74e.json'), 'utf8')) as Dump;

/** Every built-in plugin that keeps data: a chain of all of them opens the store with every extension. */
const ALL = builtinExtensions('console', 'oauth', 'limits', 'credit', 'storage');
const APPLIED_AT = 1_700_000_000_000;
/**
 * Migrations added since the fixture, and what each adds to the old schema (issue 43: key_roles api_keys.role,
 * key_parents api_keys.parent_hash, oauth@2 oauth_codes.parent_hash, console@2 its sessions' and SSO logins' tables;
 * issue 47: generations_cache generations.cache, cache_entry, cache_similarity; issue 46: routing_record
 * generations.variant and .insured; issue 48: guardrails@1 generations.guardrails; issue 49: account_names the unique
 * index accounts_name, generation_outcomes generations.http_status, console@3 usage_minute, the outcome columns of
 * the daily aggregates, the trigger that keeps them and the outcome index; limits@2 api_keys.budget_alerts and
 * accounts.budget_alerts; console@4 the daily aggregates per key, per model, per app and the status index; issue 44:
 * credit_calls@1 PostgreSQL's credit_reserve function, nothing on SQLite).
 */
const ADDED = [
  'key_roles@1',
  'key_parents@1',
  'oauth@2',
  'console@2',
  'generations_cache@1',
  'routing_record@1',
  'guardrails@1',
  'account_names@1',
  'generation_outcomes@1',
  'console@3',
  'limits@2',
  'console@4',
  'console@5',
  'credit_calls@1',
];
const ADDED_OBJECTS = [
  'console_sessions',
  'console_sessions_open',
  'console_sso_logins',
  'accounts_name',
  'usage_minute',
  'usage_minute_accounts',
  'usage_hour_accounts',
  'usage_minute_key',
  'generations_rollup',
  'generations_outcome',
  'usage_daily_keys',
  'usage_daily_models',
  'usage_daily_apps',
  'generations_status',
  'usage_pending',
];
const OUTCOME_COLUMNS =
  /, timeouts BIGINT NOT NULL DEFAULT 0, cancelled BIGINT NOT NULL DEFAULT 0, client_errors BIGINT NOT NULL DEFAULT 0,/;
const withoutAdded = (o: { type: string; name: string; sql: string }) =>
  o.name === 'api_keys'
    ? { ...o, sql: o.sql.replace(/, role TEXT, parent_hash TEXT, budget_alerts TEXT\)$/, ')') }
    : o.name === 'accounts'
      ? { ...o, sql: o.sql.replace(/, budget_alerts TEXT\)$/, ')') }
      : o.name === 'oauth_codes'
        ? { ...o, sql: o.sql.replace(/, parent_hash TEXT\)$/, ')') }
        : o.name === 'generations'
          ? {
              ...o,
              sql: o.sql.replace(
                /, cache TEXT, cache_entry TEXT, cache_similarity DOUBLE PRECISION, variant TEXT, insured INTEGER, guardrails TEXT, http_status INTEGER\)$/,
                ')',
              ),
            }
          : o.name === 'usage_daily' || o.name === 'usage_daily_accounts'
            ? { ...o, sql: o.sql.replace(OUTCOME_COLUMNS, ',') }
            : o;

function schemaOf(path: string): Array<{ type: string; name: string; sql: string }> {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'")
      .all() as Array<{ type: string; name: string; sql: string }>;
  } finally {
    db.close();
  }
}

function columnsOf(path: string): Record<string, string[]> {
  const db = new Database(path, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
    return Object.fromEntries(
      tables.map((t) => [
        t.name,
        (db.prepare(`PRAGMA table_info(${t.name})`).all() as Array<{ name: string }>).map((c) => c.name).sort(),
      ]),
    );
  } finally {
    db.close();
  }
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

describe('a database made before plugins owned their data opens unchanged', function () {
  this.timeout(30000);
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-old-'));
    path = join(dir, 'old.db');
    const db = new Database(path);
    for (const o of dump.objects) if (o.name !== 'schema_migrations') db.exec(o.sql);
    db.exec(dump.objects.find((o) => o.name === 'schema_migrations')!.sql);
    const record = db.prepare(
      'INSERT INTO schema_migrations (module, version, description, applied_at) VALUES (?, ?, ?, ?)',
    );
    for (const m of dump.migrations) record.run(m.module, m.version, m.description, APPLIED_AT);
    db.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('records the same migration modules and versions as the old code did: none renamed, none missing', () => {
    const now = [...coreMigrations, ...ALL.migrations].map((m) => `${m.module}@${m.version}`).sort();
    expect(now).to.deep.equal([...dump.migrations.map((m) => `${m.module}@${m.version}`), ...ADDED].sort());
  });

  it('with every plugin in the chain: nothing re-runs, the schema is as it was, and the plugins read their tables', async () => {
    // A chain without them first (a CLI command on a routing-only config): the plugins' tables stay as they are.
    await (await openStore({ driver: 'sqlite', path })).close();
    const store = await openStore({ driver: 'sqlite', path }, {}, ALL);
    try {
      const rows = await store.db.all<{ module: string; version: number; applied_at: number }>(
        'SELECT module, version, applied_at FROM schema_migrations',
      );
      expect(rows).to.have.length(dump.migrations.length + ADDED.length);
      expect(
        rows
          .filter((r) => !ADDED.includes(`${r.module}@${r.version}`))
          .every((r) => Number(r.applied_at) === APPLIED_AT),
        'applied by the old code, not again',
      ).to.equal(true);
      // What each plugin's repository reads is there (tables and columns made by the old code).
      for (const sql of [
        'SELECT id, body, expires_at FROM responses',
        'SELECT code_hash, used FROM oauth_codes',
        'SELECT report_id FROM leak_reports_seen',
        'SELECT allowed_models, rate_limits, budget_alerts FROM api_keys',
        'SELECT budget_alerts FROM accounts',
        'SELECT subject FROM limit_notices',
        'SELECT day, requests FROM usage_daily',
        'SELECT overrun, overrun_reason, cache_write_tokens, attempts FROM generations',
        'SELECT id FROM credit_reservations',
      ])
        await store.db.all(sql);
    } finally {
      await store.close();
    }
    expect(
      schemaOf(path)
        .filter((o) => !ADDED_OBJECTS.includes(o.name))
        .map(withoutAdded)
        .sort(byName),
    ).to.deep.equal([...dump.objects].sort(byName));
  });

  it('a new database gets every table, column and index the old code made', async () => {
    const fresh = join(dir, 'new.db');
    await (await openStore({ driver: 'sqlite', path: fresh }, {}, ALL)).close();
    await (await openStore({ driver: 'sqlite', path }, {}, ALL)).close(); // with what was added since (ADDED)
    expect(columnsOf(fresh)).to.deep.equal(columnsOf(path));
    const names = (p: string) =>
      schemaOf(p)
        .map((o) => `${o.type} ${o.name}`)
        .sort();
    expect(names(fresh)).to.deep.equal(names(path));
  });

  it('PostgreSQL records the same modules and versions', async function () {
    if (!POSTGRES_URL) return this.skip();
    const store = await openStore({ driver: 'postgres', url: await freshPostgresUrl(), pool_size: 2 }, {}, ALL);
    try {
      const rows = await store.db.all<{ module: string; version: number }>(
        'SELECT module, version FROM schema_migrations',
      );
      expect(rows.map((r) => `${r.module}@${Number(r.version)}`).sort()).to.deep.equal(
        [...dump.migrations.map((m) => `${m.module}@${m.version}`), ...ADDED].sort(),
      );
    } finally {
      await store.close();
    }
  });
});
