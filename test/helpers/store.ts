import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type OpenOptions, type Store } from '../../src/store/index';
import { storeExtensionsOf, type StoreExtensions } from '../../src/store/extensions';
import type { StoreConfig } from '../../src/config/types';
import type { Plugin } from '../../src/pipeline/plugin';
import { CreditReservations } from '../../plugins/credit/store/repo';

/** The store extensions of built-in plugins by name, as a chain of them opens the store with. */
export function builtinExtensions(...names: string[]): StoreExtensions {
  const plugin = (n: string) => (require(`../../plugins/${n}`) as { default: Plugin }).default;
  return storeExtensionsOf(names.map((n, index) => ({ plugin: plugin(n), index })));
}

/** A store opened as a gateway with the credit and storage plugins in its chain opens it. */
export function openChainStore(config: StoreConfig, opts: OpenOptions = {}): Promise<Store> {
  return openStore(config, opts, builtinExtensions('credit', 'storage'));
}

/** The credit plugin's reservations on `store` (the one the plugin uses there). */
export function creditOf(store: Store): CreditReservations {
  return CreditReservations.of(store);
}

/** The `n` a `SELECT COUNT(*) AS n ...` gives. */
export async function countRows(store: Store, sql: string, params: string[] = []): Promise<number> {
  return Number((await store.db.get<{ n: number }>(sql, params))?.n);
}

/**
 * What a crash test checks after a reopen: the account charged `charged` exactly once (usage and ledger), nothing
 * left reserved, `count` generation records and `count` stored writes (gateway_meta keys starting with `prefix`).
 */
export async function expectAllCharged(
  store: Store,
  accountId: string,
  expected: { charged: number; count: number; prefix: string },
  label = '',
): Promise<void> {
  const a = await store.accounts.get(accountId);
  expect(a?.usage, `${label}usage`).to.equal(expected.charged);
  expect(a?.reserved, `${label}reserved`).to.equal(0);
  expect(await store.ledger.sum(accountId), `${label}ledger`).to.equal(expected.charged);
  expect(await countRows(store, 'SELECT COUNT(*) AS n FROM generations'), `${label}records`).to.equal(expected.count);
  expect(
    await countRows(store, 'SELECT COUNT(*) AS n FROM gateway_meta WHERE key LIKE ?', [`${expected.prefix}%`]),
    `${label}stored writes`,
  ).to.equal(expected.count);
}

/** A SQLite store file in a new temporary directory (`prefix`), with one account of 1,000,000 nano-credits. */
export async function storeWithAccount(prefix: string): Promise<{ dir: string; path: string; accountId: string }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, 'store.db');
  const store = await openChainStore({ driver: 'sqlite', path });
  const accountId = (await store.accounts.create({ name: 'a', credits: 1_000_000 })).id;
  await store.close();
  return { dir, path, accountId };
}

/** Run test/fixtures/`name`.ts, which must end by SIGKILLing itself, and parse what it printed (JSON). */
export function runKilledFixture<T>(name: string, args: string[]): T {
  try {
    execFileSync(process.execPath, ['--require', 'tsx/cjs', join(__dirname, '..', 'fixtures', `${name}.ts`), ...args], {
      encoding: 'utf8',
      timeout: 30000,
    });
  } catch (e) {
    const err = e as { signal?: string; stdout?: string; stderr?: string };
    expect(err.signal, `the child killed itself: ${err.stderr ?? ''}`).to.equal('SIGKILL');
    return JSON.parse((err.stdout ?? '').trim()) as T;
  }
  throw new Error(`${name} ended without killing itself`);
}
