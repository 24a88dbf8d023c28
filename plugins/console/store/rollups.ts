/**
 * @module
 * The console's aggregates, maintained by the database itself as generation records are written: a trigger on
 * `generations` adds each inserted record to its minute (`usage_minute` per account and key, for a key's overview;
 * `usage_minute_accounts` per account), its hour (`usage_hour_accounts`, for the week's overview), its day
 * (`usage_daily`, per account, key, model, provider, deployment and app) and its day's account totals
 * (`usage_daily_accounts`), in the inserting statement's own transaction. So whoever writes a record (the credit
 * plugin's settlement, the outer error writer's light record, a bulk import) commits it and its aggregates together
 * or not at all, on SQLite and PostgreSQL. PostgreSQL runs a statement trigger over the inserted rows (one grouped
 * upsert per aggregate and statement, however many rows a settlement batch inserts). SQLite has only row triggers:
 * since console@5 its trigger stages each record's share in `usage_pending` (one insert, the outcome worked out once),
 * and the store engine folds that table into every aggregate at the end of each batch of writes, before any commit
 * (the procedure in ./procedures.ts; decision 0037); until console@5 it ran an upsert per aggregate per record.
 * Records deleted by retention stay counted.
 */

/**
 * Each record's outcome (docs/decisions/0055-analytics-from-rollups.md). `r`: the record's row alias, or '' for bare
 * column names (the expression index generations_outcome, which the console's outcome filter uses: same text).
 */
export function outcomeSql(r = ''): string {
  const c = (col: string) => (r ? `${r}.${col}` : col);
  return `CASE WHEN ${c('cancelled')} = 1 THEN 'cancelled' WHEN ${c('http_status')} >= 400 AND ${c('http_status')} < 500 THEN 'client_error' WHEN ${c('error_code')} LIKE '%timeout%' THEN 'timeout' WHEN ${c('status')} = 'error' OR (${c('status')} = 'incomplete' AND ${c('error_code')} IS NOT NULL) THEN 'upstream_error' ELSE 'success' END`;
}

export const OUTCOMES = ['success', 'upstream_error', 'timeout', 'cancelled', 'client_error'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The summed columns of every aggregate: `errors` counts upstream errors, timeouts and client errors. */
export const SUMS = [
  'requests',
  'errors',
  'timeouts',
  'cancelled',
  'client_errors',
  'prompt_tokens',
  'completion_tokens',
  'reasoning_tokens',
  'cached_tokens',
  'cost',
  'latency_ms_sum',
] as const;

/** One record's contribution to each of SUMS, in their order. */
function contributions(r: string): string[] {
  const o = outcomeSql(r);
  const is = (...outcomes: Outcome[]) =>
    `CASE WHEN (${o}) IN (${outcomes.map((x) => `'${x}'`).join(', ')}) THEN 1 ELSE 0 END`;
  return [
    '1',
    is('upstream_error', 'timeout', 'client_error'),
    is('timeout'),
    is('cancelled'),
    is('client_error'),
    `${r}.prompt_tokens`,
    `${r}.completion_tokens`,
    `${r}.reasoning_tokens`,
    `${r}.cached_tokens`,
    `${r}.cost`,
    `COALESCE(${r}.latency_ms, 0)`,
  ];
}

interface Rollup {
  table: string;
  /** Key columns and the expression of each over a record. */
  keys: Array<[string, (r: string) => string]>;
  /** latency_ms_max as well (the minute aggregate). */
  max?: boolean;
}

export const DAY_MS = 86_400_000;
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

type KeyColumn = Rollup['keys'][number];
const minute: KeyColumn = ['minute', (r) => `CAST(${r}.created_at / ${MINUTE_MS} AS INTEGER)`];
const day: KeyColumn = ['day', (r) => `CAST(${r}.created_at / ${DAY_MS} AS INTEGER)`];
const account: KeyColumn = ['account_id', (r) => `${r}.account_id`];
const keyHash: KeyColumn = ['key_hash', (r) => `COALESCE(${r}.key_hash, '')`];
const model: KeyColumn = ['model', (r) => `${r}.model`];
const provider: KeyColumn = ['provider', (r) => `COALESCE(${r}.provider, '')`];
const deployment: KeyColumn = ['deployment', (r) => `COALESCE(${r}.deployment, '')`];
const app: KeyColumn = ['app', (r) => `COALESCE(${r}.app_referer, ${r}.app_title, '')`];

/** The aggregates of console@3. */
const V3_ROLLUPS: Rollup[] = [
  { table: 'usage_minute', keys: [minute, account, keyHash], max: true },
  { table: 'usage_minute_accounts', keys: [minute, account], max: true },
  {
    table: 'usage_hour_accounts',
    keys: [['hour', (r) => `CAST(${r}.created_at / ${HOUR_MS} AS INTEGER)`], account],
    max: true,
  },
  { table: 'usage_daily', keys: [day, account, keyHash, model, provider, deployment, app] },
  { table: 'usage_daily_accounts', keys: [day, account] },
];

/**
 * console@4: daily aggregates over fewer dimensions, so that a grouping by key, by model or deployment, or by app and
 * model (the activity page's charts, the models page, rankings) reads a row per group and day, not usage_daily's row
 * per key, model, deployment and app. Every one keeps the account, the scope of an account's session.
 */
const NARROW_DAILY: Rollup[] = [
  { table: 'usage_daily_keys', keys: [day, account, keyHash] },
  { table: 'usage_daily_models', keys: [day, account, model, provider, deployment] },
  { table: 'usage_daily_apps', keys: [day, account, app, model] },
];

const ROLLUPS: Rollup[] = [...V3_ROLLUPS, ...NARROW_DAILY];

/**
 * The daily aggregates a query may read, smallest first (in rows a day), each with the dimension columns it keeps:
 * a query reads the first one that keeps every column it groups or filters by.
 */
export const DAILY_AGGREGATES: ReadonlyArray<{ table: string; columns: readonly string[] }> = [
  V3_ROLLUPS[4],
  ...NARROW_DAILY,
  V3_ROLLUPS[3],
].map((u) => ({ table: u.table, columns: u.keys.map(([k]) => k) }));

function conflict(u: Rollup): string {
  const sets = SUMS.map((s) => `${s} = ${u.table}.${s} + excluded.${s}`);
  if (u.max) sets.push(`latency_ms_max = GREATEST_(${u.table}.latency_ms_max, excluded.latency_ms_max)`);
  return `ON CONFLICT (${u.keys.map(([k]) => k).join(', ')}) DO UPDATE SET ${sets.join(', ')}`;
}

function columns(u: Rollup): string {
  return [...u.keys.map(([k]) => k), ...SUMS, ...(u.max ? ['latency_ms_max'] : [])].join(', ');
}

/** The upsert of `rows` (a table or subquery of generation records) grouped into `u`; `where` limits the rows. */
function groupedUpsert(u: Rollup, rows: string, where = 'true'): string {
  const keys = u.keys.map(([, e]) => e('g'));
  const sums = contributions('g').map((c) => `SUM(${c})`);
  if (u.max) sums.push('MAX(COALESCE(g.latency_ms, 0))');
  return `INSERT INTO ${u.table} (${columns(u)})
    SELECT ${[...keys, ...sums].join(', ')} FROM ${rows} g WHERE ${where}
    GROUP BY ${keys.join(', ')} ORDER BY ${keys.join(', ')} ${conflict(u)}`;
}

/** SQLite: one row trigger, an upsert per aggregate. */
function sqliteTrigger(rollups: readonly Rollup[]): string {
  const upserts = rollups.map((u) => {
    const vals = [...u.keys.map(([, e]) => e('NEW')), ...contributions('NEW')];
    if (u.max) vals.push('COALESCE(NEW.latency_ms, 0)');
    return `INSERT INTO ${u.table} (${columns(u)}) VALUES (${vals.join(', ')}) ${conflict(u)};`;
  });
  return `CREATE TRIGGER generations_rollup AFTER INSERT ON generations BEGIN
    ${upserts.join('\n    ').replaceAll('GREATEST_', 'MAX')}
  END;`;
}

/** PostgreSQL: the function of the statement trigger, over the statement's inserted rows (a transition table). */
function postgresFunction(rollups: readonly Rollup[]): string {
  const upserts = rollups.map((u) => `${groupedUpsert(u, 'inserted_generations')};`);
  return `CREATE OR REPLACE FUNCTION console_usage_rollup() RETURNS trigger LANGUAGE plpgsql AS $rollup$
  BEGIN
    ${upserts.join('\n    ').replaceAll('GREATEST_', 'GREATEST')}
    RETURN NULL;
  END $rollup$;`;
}

function postgresTrigger(rollups: readonly Rollup[]): string {
  return `${postgresFunction(rollups)}
  CREATE TRIGGER generations_rollup AFTER INSERT ON generations
    REFERENCING NEW TABLE AS inserted_generations FOR EACH STATEMENT EXECUTE FUNCTION console_usage_rollup();`;
}

const SUM_COLUMNS = (extra: string) =>
  `${SUMS.map((s) => `${s} ${s === 'latency_ms_sum' ? 'DOUBLE PRECISION' : 'BIGINT'} NOT NULL DEFAULT 0`).join(', ')}${extra}`;

/**
 * console@3: the minute aggregate, the outcome columns of the daily ones, the trigger, and the backfill. Days that
 * still have records are counted again from them (the roll-up behind a watermark that this replaces counted errors
 * without timeouts, and had not yet reached the newest records); older days, whose records retention deleted, keep
 * their aggregates.
 */
export function rollupMigration(dialect: 'sqlite' | 'postgres'): string {
  const max = (f: string) =>
    dialect === 'sqlite' ? f.replaceAll('GREATEST_', 'MAX') : f.replaceAll('GREATEST_', 'GREATEST');
  const firstDay = `(SELECT CAST(MIN(created_at) / ${DAY_MS} AS INTEGER) FROM generations)`;
  const added = ['timeouts', 'cancelled', 'client_errors'];
  return `
    CREATE TABLE usage_minute (
      minute BIGINT NOT NULL, account_id TEXT NOT NULL, key_hash TEXT NOT NULL,
      ${SUM_COLUMNS(', latency_ms_max DOUBLE PRECISION NOT NULL DEFAULT 0')},
      PRIMARY KEY (minute, account_id, key_hash)
    );
    CREATE INDEX usage_minute_key ON usage_minute(key_hash, minute);
    CREATE TABLE usage_minute_accounts (
      minute BIGINT NOT NULL, account_id TEXT NOT NULL,
      ${SUM_COLUMNS(', latency_ms_max DOUBLE PRECISION NOT NULL DEFAULT 0')},
      PRIMARY KEY (minute, account_id)
    );
    CREATE TABLE usage_hour_accounts (
      hour BIGINT NOT NULL, account_id TEXT NOT NULL,
      ${SUM_COLUMNS(', latency_ms_max DOUBLE PRECISION NOT NULL DEFAULT 0')},
      PRIMARY KEY (hour, account_id)
    );
    ${['usage_daily', 'usage_daily_accounts']
      .flatMap((t) => added.map((c) => `ALTER TABLE ${t} ADD COLUMN ${c} BIGINT NOT NULL DEFAULT 0;`))
      .join('\n    ')}
    DELETE FROM usage_daily WHERE day >= ${firstDay};
    DELETE FROM usage_daily_accounts WHERE day >= ${firstDay};
    DELETE FROM gateway_meta WHERE key = 'usage_rollup_watermark';
    ${V3_ROLLUPS.map((u) => max(`${groupedUpsert(u, 'generations')};`)).join('\n    ')}
    ${dialect === 'sqlite' ? sqliteTrigger(V3_ROLLUPS) : postgresTrigger(V3_ROLLUPS)}
    CREATE INDEX generations_outcome ON generations((${outcomeSql()}), created_at);
  `;
}

/**
 * console@4: the narrower daily aggregates (NARROW_DAILY), filled from usage_daily (which still counts the days whose
 * records retention deleted, so they agree to the unit), and the trigger that keeps them too; an index for the
 * records list's status filter.
 */
export function narrowDailyMigration(dialect: 'sqlite' | 'postgres'): string {
  const tables = NARROW_DAILY.map((u) => {
    const keys = u.keys.map(([k]) => k);
    return `CREATE TABLE ${u.table} (
      ${keys.map((k) => `${k} ${k === 'day' ? 'INTEGER' : 'TEXT'} NOT NULL`).join(', ')},
      ${SUM_COLUMNS('')},
      PRIMARY KEY (${keys.join(', ')})
    );
    INSERT INTO ${u.table} (${columns(u)})
      SELECT ${keys.join(', ')}, ${SUMS.map((s) => `SUM(${s})`).join(', ')} FROM usage_daily GROUP BY ${keys.join(', ')};`;
  });
  const trigger =
    dialect === 'sqlite'
      ? `DROP TRIGGER generations_rollup;\n    ${sqliteTrigger(ROLLUPS)}`
      : postgresFunction(ROLLUPS);
  return `
    ${tables.join('\n    ')}
    ${trigger}
    CREATE INDEX generations_status ON generations(status, created_at);
  `;
}

/** SQLite: where the row trigger stages each record's share of the aggregates until the engine folds it (console@5). */
export const STAGED = 'usage_pending';

/** The key columns a staged row carries: every aggregate's keys, each worked out once per record. */
const STAGED_KEYS: KeyColumn[] = [
  minute,
  ['hour', (r) => `CAST(${r}.created_at / ${HOUR_MS} AS INTEGER)`],
  day,
  account,
  keyHash,
  model,
  provider,
  deployment,
  app,
];

/** A staged row's measures: SUMS after `requests` (a staged row is one request), its latency as it is. */
const STAGED_MEASURES = SUMS.slice(1).map((s) => (s === 'latency_ms_sum' ? 'latency_ms' : s));

/** One staged row's measures over NEW, `o` being its outcome (worked out once, in a subquery). */
function stagedMeasures(): string[] {
  return [
    `o IN ('upstream_error', 'timeout', 'client_error')`,
    `o = 'timeout'`,
    `o = 'cancelled'`,
    `o = 'client_error'`,
    'NEW.prompt_tokens',
    'NEW.completion_tokens',
    'NEW.reasoning_tokens',
    'NEW.cached_tokens',
    'NEW.cost',
    'COALESCE(NEW.latency_ms, 0)',
  ];
}

/**
 * console@5 on SQLite: the staging table and the row trigger that fills it, in place of console@4's eight upserts a
 * record. Nothing changes on PostgreSQL, whose statement trigger already upserts once per aggregate and statement.
 */
export function stagedRollupMigration(dialect: 'sqlite' | 'postgres'): string {
  if (dialect === 'postgres') return 'SELECT 1;';
  const keyColumns = STAGED_KEYS.map(([k]) => k);
  return `
    CREATE TABLE ${STAGED} (
      ${keyColumns.map((k) => `${k} ${['minute', 'hour', 'day'].includes(k) ? 'INTEGER' : 'TEXT'} NOT NULL`).join(', ')},
      ${STAGED_MEASURES.map((m) => `${m} ${m === 'latency_ms' ? 'DOUBLE PRECISION' : 'BIGINT'} NOT NULL`).join(', ')}
    );
    DROP TRIGGER generations_rollup;
    CREATE TRIGGER generations_rollup AFTER INSERT ON generations BEGIN
      INSERT INTO ${STAGED} (${[...keyColumns, ...STAGED_MEASURES].join(', ')})
        SELECT ${[...STAGED_KEYS.map(([, e]) => e('NEW')), ...stagedMeasures()].join(', ')}
        FROM (SELECT ${outcomeSql('NEW')} AS o);
    END;
  `;
}

/** The sum of each of SUMS over staged rows, in their order. */
const STAGED_SUMS = ['COUNT(*)', ...STAGED_MEASURES.map((m) => `SUM(${m})`)];

/**
 * SQLite: what the fold runs, in order: one grouped upsert from the staging table into each aggregate, then the staging
 * table emptied.
 */
export function foldStatements(): string[] {
  const upserts = ROLLUPS.map((u) => {
    const keys = u.keys.map(([k]) => k);
    const sums = u.max ? [...STAGED_SUMS, 'MAX(latency_ms)'] : STAGED_SUMS;
    return `INSERT INTO ${u.table} (${columns(u)})
      SELECT ${[...keys, ...sums].join(', ')} FROM ${STAGED} WHERE true GROUP BY ${keys.join(', ')}
      ${conflict(u).replaceAll('GREATEST_', 'MAX')}`;
  });
  return [...upserts, `DELETE FROM ${STAGED}`];
}
