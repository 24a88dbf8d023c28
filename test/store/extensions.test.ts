import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config/load';
import { loadPlugins } from '../../src/pipeline/loader';
import { openStore, type Store } from '../../src/store/index';
import { storeExtensionsOf } from '../../src/store/extensions';
import { SqliteDb } from '../../src/store/engine/sqlite-db';
import type { Proc } from '../../src/store/db';
import type { StoreConfig } from '../../src/config/types';
import { withStore } from '../../src/cli/store-cli';
import { startTestGateway, testConfig } from '../helpers/gateway';
import { freshPostgresUrl, POSTGRES_URL } from '../helpers/postgres';

/**
 * An outside plugin (plain JavaScript, loaded by path) that keeps notes in the store: its migration and its
 * procedures module, which imports the light door `model-gateway/plugin/procedures` (in the SQLite worker too).
 */
function writePlugin(dir: string, name: string, opts: { module?: string; proc?: string } = {}): string {
  const folder = join(dir, name);
  const module = opts.module ?? name;
  const proc = opts.proc ?? `${name}.add`;
  rmSync(folder, { recursive: true, force: true });
  require('node:fs').mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'procedures.js'),
    `const { get, run } = require('model-gateway/plugin/procedures');
exports.addNote = {
  name: ${JSON.stringify(proc)},
  *body({ id, text }) {
    yield* run('INSERT INTO ${module}_notes (id, text) VALUES (?, ?)', [id, text]);
    return Number((yield* get('SELECT COUNT(*) AS n FROM ${module}_notes')).n);
  },
};
`,
  );
  writeFileSync(
    join(folder, 'index.js'),
    `const { definePlugin } = require('model-gateway/plugin');
module.exports = definePlugin({
  name: ${JSON.stringify(name)},
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  store: {
    migrations: [
      { module: ${JSON.stringify(module)}, version: 1, description: 'notes',
        up: 'CREATE TABLE ${module}_notes (id TEXT PRIMARY KEY, text TEXT NOT NULL)' },
    ],
    procedures: require.resolve('./procedures'),
  },
  setup() { return {}; },
});
`,
  );
  return folder;
}

type AddNote = Proc<{ id: string; text: string }, number>;
const addNoteOf = (folder: string) => (require(join(folder, 'procedures.js')) as { addNote: AddNote }).addNote;

describe("plugins' store extensions (migrations and procedures of their own)", function () {
  this.timeout(60000);
  let dir: string;
  let notes: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-ext-'));
    notes = writePlugin(dir, 'notes');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const stores: Array<[string, () => Promise<StoreConfig | null>]> = [
    ['SQLite file (procedures in the worker thread)', async () => ({ driver: 'sqlite', path: join(dir, 's.db') })],
    ['memory', async () => ({ driver: 'memory' })],
    [
      'PostgreSQL',
      async () => (POSTGRES_URL ? { driver: 'postgres', url: await freshPostgresUrl(), pool_size: 2 } : null),
    ],
  ];
  for (const [label, config] of stores)
    it(`the gateway opens the store with the chain's extensions: ${label}`, async function () {
      const store = await config();
      if (!store) return this.skip();
      const gw = await startTestGateway(testConfig({ store, plugins: [{ use: notes }, 'routing'] }));
      try {
        const s = gw.services.store;
        const applied = await s.db.all<{ module: string }>(
          "SELECT module FROM schema_migrations WHERE module = 'notes'",
        );
        expect(applied).to.have.length(1);
        expect(await s.db.call(addNoteOf(notes), { id: 'a', text: 'one' })).to.equal(1);
        expect(await s.db.call(addNoteOf(notes), { id: 'b', text: 'two' })).to.equal(2);
      } finally {
        await gw.close();
      }
    });

  it('a logged call of a plugin procedure survives its worker thread: the next worker loads it before replaying', async () => {
    const path = join(dir, 'redo.db');
    const chain = [
      { name: 'notes', use: notes, config: {} },
      { name: 'routing', config: {} },
    ];
    const extensions = storeExtensionsOf(loadPlugins(chain, dir));
    const store = await openStore({ driver: 'sqlite', path }, { redo: true, commitMs: 60_000 }, extensions);
    try {
      expect(await store.db.call(addNoteOf(notes), { id: 'a', text: 'logged' })).to.equal(1);
      expect(statSync(`${path}-redo`).size, 'logged, not committed').to.be.greaterThan(0);
      const link = (store.db as unknown as { link: { worker: { terminate(): Promise<number> } } }).link;
      await link.worker.terminate();
      expect((await (store.db as SqliteDb).status()).redo).to.equal(true);
      expect(await store.db.get('SELECT text FROM notes_notes')).to.deep.equal({ text: 'logged' });
    } finally {
      await store.close();
    }
  });

  it('refuses, at load, two plugins that claim one migration module or one procedure name, naming both', () => {
    const other = writePlugin(dir, 'other', { module: 'notes', proc: 'other.add' });
    const same = writePlugin(dir, 'same', { module: 'same', proc: 'notes.add' });
    const core = writePlugin(dir, 'core', { module: 'accounts', proc: 'core.add' });
    const load = (use: string) => () =>
      loadPlugins(
        [
          { name: 'notes', use: notes, config: {} },
          { name: 'x', use, config: {} },
          { name: 'routing', config: {} },
        ],
        dir,
      );
    expect(load(other)).to.throw(
      ConfigError,
      /plugin 'other' claims the store migration module 'notes', as plugin 'notes'/,
    );
    expect(load(same)).to.throw(ConfigError, /plugin 'same' claims the store procedure 'notes.add', as plugin 'notes'/);
    expect(load(core)).to.throw(ConfigError, /plugin 'core' claims the store migration module 'accounts', as the core/);
  });

  it("store commands of the CLI open the store with the configured chain's extensions", async () => {
    const file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `store: { driver: sqlite, path: ${join(dir, 'cli.db')} }\nproviders: [{ name: mock, type: mock }]\n` +
        `models: []\nplugins: [{ use: ${notes} }, routing]\n`,
    );
    let modules: string[] = [];
    await withStore(['--config', file], {}, async (store: Store) => {
      modules = (await store.db.all<{ module: string }>('SELECT module FROM schema_migrations')).map((r) => r.module);
      return 0;
    });
    expect(modules).to.include('notes');
  });

  it("a store handed to a gateway must have been opened with its chain's extensions", async () => {
    const store = await openStore({ driver: 'memory' });
    try {
      let err: unknown;
      await startTestGateway(testConfig({ plugins: [{ use: notes }, 'routing'] }), { store }).catch((e) => (err = e));
      // The chain's other plugins (routing) bring their own migrations too: name each of notes' parts, in any order.
      expect(String(err)).to.match(/opened without the chain's store extensions: /);
      expect(String(err))
        .to.include('migration notes@1')
        .and.to.match(/procedures \S*notes/);
    } finally {
      await store.close();
    }
  });

  it('PostgreSQL refuses a procedure that is not registered, as SQLite does', async function () {
    const stores: Store[] = [await openStore({ driver: 'memory' })];
    if (POSTGRES_URL) stores.push(await openStore({ driver: 'postgres', url: await freshPostgresUrl(), pool_size: 2 }));
    try {
      for (const s of stores)
        await s.db.call(addNoteOf(notes), { id: 'a', text: 'x' }).then(
          () => expect.fail(`${s.driver}: ran`),
          (e: Error) => expect(e.message, s.driver).to.equal("unknown store procedure 'notes.add'"),
        );
    } finally {
      for (const s of stores) await s.close();
    }
  });
});
