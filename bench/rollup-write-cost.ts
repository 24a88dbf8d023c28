/**
 * What the console's aggregates cost each record written: generation records inserted through the store's bulk path
 * (insertRows, 5,000 a transaction, as test/plugins/console/million.test.ts fills its store), into a fresh store at
 * each console schema version in turn (2: no trigger; 3: the trigger's five aggregates; 4: eight, and the status
 * index; 5: on SQLite, the records staged by the trigger and folded once a transaction), round after round so that a
 * loaded machine weighs on every target alike. Records per second by the wall clock, and on SQLite also by this
 * process's CPU time (the store's worker threads are in it). `--batch` sets the records a transaction (a live gateway
 * settles a few to a few dozen at once).
 *   npx tsx bench/rollup-write-cost.ts [--records N] [--rounds R] [--batch B] [--postgres URL]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { openStore, type Store } from '../src/store/index';
import { driveAsync, insertRows, type Param } from '../src/store/db';
import { GENERATION_COLUMNS, generationParams } from '../src/store/generations';
import { consoleMigrations } from '../plugins/console/store/migrations';
import { freshPostgresUrl } from '../test/helpers/postgres';
import { spreadRecord } from '../test/helpers/usage-records';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '3' },
    batch: { type: 'string', default: '5000' },
    postgres: { type: 'string' },
  },
});
const N = Number(values.records);
const ROUNDS = Number(values.rounds);
const PG = values.postgres ?? process.env.GATEWAY_TEST_POSTGRES_URL;
const BATCH = Number(values.batch);
const VERSIONS = [2, 3, 4, 5];

const bulk = {
  name: 'bench.bulk-records',
  body: (rows: Param[][]) => insertRows('generations', GENERATION_COLUMNS, rows),
};

/** Fills `store` with N records; wall and CPU milliseconds. */
async function fill(store: Store): Promise<{ wall: number; cpu: number }> {
  const now = Date.now();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let at = 0; at < N; at += BATCH) {
    const rows: Param[][] = [];
    for (let i = at; i < Math.min(N, at + BATCH); i++) rows.push(generationParams(spreadRecord(i, N, now)));
    await store.db.tx((t) => driveAsync(bulk, rows, t));
  }
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

async function open(
  driver: 'sqlite' | 'postgres',
  version: number,
): Promise<{ store: Store; done: () => Promise<void> }> {
  const procedures = version >= 5 ? [require.resolve('../plugins/console/store/procedures')] : [];
  const ext = { migrations: consoleMigrations.filter((m) => m.version <= version), procedures };
  if (driver === 'postgres') {
    const url = await freshPostgresUrl(PG);
    const store = await openStore({ driver: 'postgres', url, pool_size: 4 }, {}, ext);
    return { store, done: () => dropSchema(url) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'gw-rollup-cost-'));
  const store = await openStore({ driver: 'sqlite', path: join(dir, 'g.db') }, {}, ext);
  return { store, done: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** The schema freshPostgresUrl made, dropped (a bench leaves no tables behind). */
async function dropSchema(url: string): Promise<void> {
  const schema = /search_path=(\w+)/.exec(new URL(url).searchParams.get('options') ?? '')?.[1];
  const c = new Client({ connectionString: PG });
  await c.connect();
  await c.query(`DROP SCHEMA ${schema} CASCADE`);
  await c.end();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function bench(driver: 'sqlite' | 'postgres'): Promise<void> {
  const wall = new Map<number, number[]>(VERSIONS.map((v) => [v, []]));
  const cpu = new Map<number, number[]>(VERSIONS.map((v) => [v, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of VERSIONS) {
      const { store, done } = await open(driver, v);
      try {
        const r = await fill(store);
        wall.get(v)?.push(N / (r.wall / 1000));
        cpu.get(v)?.push(N / (r.cpu / 1000));
      } finally {
        await store.close();
        await done();
      }
    }
  }
  const fmt = (xs: number[]) => `${Math.round(median(xs))} (${xs.map((x) => Math.round(x)).join(', ')})`;
  for (const v of VERSIONS) {
    const cpuPart = driver === 'sqlite' ? `; per CPU second: ${fmt(cpu.get(v) ?? [])}` : '';
    process.stdout.write(`  ${driver} console@${v}: records/s wall ${fmt(wall.get(v) ?? [])}${cpuPart}\n`);
  }
}

async function main(): Promise<void> {
  const load = (await import('node:os')).loadavg().map((x) => x.toFixed(1));
  process.stdout.write(`rollup write cost, ${N} records x ${ROUNDS} rounds, node ${process.version}, load ${load}\n`);
  await bench('sqlite');
  if (PG) await bench('postgres');
  else process.stdout.write('  PostgreSQL: skipped (set GATEWAY_TEST_POSTGRES_URL or --postgres URL)\n');
}

void main();
