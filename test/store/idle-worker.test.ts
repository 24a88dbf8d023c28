import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { within } from '../helpers/poll';
import {} from '../../src/store/index';
import { SqliteDb } from '../../src/store/engine/sqlite-db';
import { fileSize } from '../../src/store/stats';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
import { MOCK_MODEL, postJson, startTestGateway, testConfig } from '../helpers/gateway';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process';
import { creditOf, openChainStore } from '../helpers/store';

const threads = (pid: number) => readdirSync(`/proc/${pid}/task`).length;

describe("SQLite store's worker thread stops when idle", function () {
  this.timeout(60000);
  let dir: string;

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gw-idle-worker-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a gateway (real sockets, credit) loses the thread after idling, and the next request sees what was committed', async () => {
    const gw: GatewayProcess = await startGatewayProcess(
      {
        server: { host: '127.0.0.1', port: 0, log_level: 'info' },
        store: { driver: 'sqlite', path: join(dir, 'gateway.db'), idle_worker_ms: 300 },
        providers: [{ name: 'mock', type: 'mock' }],
        models: [MOCK_MODEL],
        plugins: ['auth', 'credit', 'routing'],
      },
      { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    );
    const pid = gw.child.pid!;
    try {
      const chat = (key: string) =>
        postJson(
          `${gw.url}/v1/chat/completions`,
          { model: MOCK_MODEL.id, messages: [{ role: 'user', content: 'Hello there' }] },
          { authorization: `Bearer ${key}` },
        );
      const { key, accountId } = await makeAccountKey(gw, { credits: 10 });
      const first = await chat(key);
      expect(first.status).to.equal(200);
      const cost = ((await first.json()) as { usage: { cost: number } }).usage.cost;
      expect(cost).to.be.above(0);
      const busy = threads(pid);
      expect(await within(5000, () => threads(pid) === busy - 1), 'one thread fewer once idle').to.equal(true);

      // Started again by the next request; the charge committed before the close is there.
      const account = async () =>
        (await adminCall(gw, 'GET', `/v1/accounts/${accountId}`)).body.data as { usage: number };
      expect((await account()).usage).to.be.closeTo(cost, 1e-9);
      expect(threads(pid)).to.equal(busy);
      const second = await chat(key);
      expect(second.status).to.equal(200);
      await second.json();
      expect((await account()).usage, 'the second charge adds to the committed one').to.be.closeTo(2 * cost, 1e-9);
      expect(await within(5000, () => threads(pid) === busy - 1), 'and stops again').to.equal(true);
    } finally {
      await gw.stop();
    }
  });

  it("periodic refreshes leave a resting worker resting; another process's change is read once a request wakes it", async () => {
    const path = join(dir, 'gateway.db');
    const gw = await startTestGateway(
      testConfig(
        {
          store: { driver: 'sqlite', path, idle_worker_ms: 300 },
          // The deployment measures a request leaves are published to the store 100 ms after it, within the idle delay.
          plugins: ['auth', 'credit', { routing: { presets_refresh_ms: 100, measures: { publish_ms: 100 } } }],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    const db = gw.services.store.db as SqliteDb;
    const preset = async () => (await adminCall(gw, 'GET', '/v1/presets/later')).status;
    const chat = (key: string) =>
      postJson(
        `${gw.url}/v1/chat/completions`,
        { model: MOCK_MODEL.id, messages: [{ role: 'user', content: 'Hello there' }] },
        { authorization: `Bearer ${key}` },
      );
    try {
      const { key } = await makeAccountKey(gw, { credits: 10 });
      await (await chat(key)).json();
      expect(await within(5000, () => !db.workerRunning), 'stopped once idle').to.equal(true);
      await sleep(500);
      expect(await within(5000, () => !db.workerRunning), 'and rests').to.equal(true);
      // What a CLI command does: another connection writes a preset.
      const other = new Database(path);
      other
        .prepare('INSERT INTO routing_presets (name, body, updated_at) VALUES (?, ?, ?)')
        .run('later', JSON.stringify({ name: 'later', model: MOCK_MODEL.id }), Date.now());
      other.close();
      for (let round = 0; round < 15; round++) {
        await sleep(100);
        expect(db.workerRunning, `refresh round ${round}: the worker still rests`).to.equal(false);
      }
      expect(await preset(), 'not read while it rests').to.equal(404);
      await (await chat(key)).json();
      expect(await within(3000, async () => (await preset()) === 200), 'read once a request woke it').to.equal(true);
    } finally {
      await gw.stop();
    }
  });

  it('closes in order (WAL truncated), not while a driven transaction is open, and restarts for the next request', async () => {
    const path = join(dir, 'store.db');
    const db = new SqliteDb(path, { idleWorkerMs: 200 });
    try {
      await db.exec('CREATE TABLE t (v TEXT NOT NULL)');
      await db.write('INSERT INTO t (v) VALUES (?)', ['one']);
      expect(db.workerRunning).to.equal(true);
      expect(await within(3000, () => !db.workerRunning), 'stopped after idling').to.equal(true);
      expect(fileSize(`${path}-wal`), 'the close checkpointed and truncated the WAL').to.equal(0);

      // A transaction left open across the idle delay keeps the worker (and its transaction).
      const tx = db.tx(async (t) => {
        await t.run('INSERT INTO t (v) VALUES (?)', ['two']);
        await sleep(600);
        expect(db.workerRunning, 'kept while the transaction is open').to.equal(true);
        await t.run('INSERT INTO t (v) VALUES (?)', ['three']);
      });
      await tx;
      expect(await within(3000, () => !db.workerRunning)).to.equal(true);
      const rows = await db.all<{ v: string }>('SELECT v FROM t ORDER BY rowid');
      expect(rows.map((r) => r.v)).to.deep.equal(['one', 'two', 'three']);

      // Requests that come around the moment the idle worker checks its holds and closes (200-215 ms after the
      // last answer): each waits for the next worker if it must, none is lost, and each sees every write before it.
      for (let i = 0; i < 24; i++) {
        await sleep(200 + (i % 8) * 2);
        const n = i % 2 === 0 ? await db.write('INSERT INTO t (v) VALUES (?)', [`w${i}`]) : null;
        if (n) expect(n.changes).to.equal(1);
        const c = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM t');
        expect(c?.n).to.equal(3 + Math.floor(i / 2) + 1);
      }
    } finally {
      await db.close();
    }
  });

  it('keeps the worker while a credit hold is in its book; after it stops, the next reservation reads a new book', async () => {
    const store = await openChainStore({ driver: 'sqlite', path: join(dir, 'store.db'), idle_worker_ms: 200 });
    const db = store.db as SqliteDb;
    try {
      const accountId = (await store.accounts.create({ name: 'a', credits: 10_000 })).id;
      const r = await creditOf(store).reserve(accountId, null, 4_000);
      expect(r.ok).to.equal(true);
      await sleep(700);
      expect(db.workerRunning, 'a hold keeps it').to.equal(true);
      expect((await store.accounts.get(accountId))!.reserved).to.equal(4_000);
      expect(r.ok && (await creditOf(store).settle(r.id, 1_500, null))).to.equal(true);
      expect(await within(3000, () => !db.workerRunning), 'settled: it stops').to.equal(true);

      expect(await creditOf(store).reserve(accountId, null, 8_501), 'the balance the charge left').to.deep.equal({
        ok: false,
        limit: 'account',
        available: 8_500,
      });
      const again = await creditOf(store).reserve(accountId, null, 8_500);
      expect(again.ok && again.book, 'a new worker, a new book').to.not.equal(r.ok && r.book);
      expect(again.ok && (await creditOf(store).settle(again.id, 8_500, null))).to.equal(true);
      expect((await store.accounts.get(accountId))!.usage).to.equal(10_000);
    } finally {
      await store.close();
    }
  });
});
