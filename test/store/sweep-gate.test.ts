import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Store } from '../../src/store/index';
import { GENERATION_INSERT, generationParams } from '../../src/store/generations';
import type { SqliteDb } from '../../src/store/engine/sqlite-db';
import { generationRecord } from '../helpers/generation';
import { MOCK_MODEL, startTestGateway, testConfig } from '../helpers/gateway';
import { creditOf, openChainStore } from '../helpers/store';

const DAY = 86_400_000;

describe('sweeps leave an idle store alone until something falls due', function () {
  this.timeout(20000);
  let dir: string;

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gw-sweep-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const messages = (store: Store) => (store.db as SqliteDb).messages;

  it('generation retention: deletes what is due, then waits for the oldest record to fall due', async () => {
    const store = await openChainStore({ driver: 'sqlite', path: join(dir, 's.db') });
    try {
      const a = await store.accounts.create({ name: 'a', credits: 0 });
      const now = Date.now();
      const insert = (id: string, createdAt: number) =>
        store.db.run(GENERATION_INSERT, generationParams(generationRecord({ id, accountId: a.id, createdAt })));
      await insert('old', now - 2 * DAY);
      await insert('soon', now - DAY + 700); // falls due 700 ms from now
      store.startRetention(
        { generation_retention_days: 1 },
        (e) => {
          throw e;
        },
        25,
      );
      await sleep(250);
      expect((await store.generations.get('old'))?.id, 'the due one went').to.equal(undefined);
      expect((await store.generations.get('soon'))?.id, 'the other is not due yet').to.equal('soon');
      const before = messages(store);
      await sleep(250); // ~10 rounds
      expect(messages(store) - before, 'rounds before it falls due touch nothing').to.equal(0);
      await sleep(600);
      expect((await store.generations.get('soon'))?.id, 'deleted once due').to.equal(undefined);
      const after = messages(store);
      await sleep(250);
      expect(messages(store) - after, 'nothing left: the rounds wait').to.equal(0);
    } finally {
      await store.close();
    }
  });

  it('stored responses and stale reservations: a gateway at rest sends its store nothing', async () => {
    const gw = await startTestGateway(
      testConfig({
        store: { driver: 'sqlite', path: join(dir, 'g.db') },
        models: [MOCK_MODEL],
        plugins: [{ storage: { ttl_seconds: 3600, sweep_interval_ms: 20 } }, 'routing'],
      }),
    );
    try {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MOCK_MODEL.id, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).to.equal(200);
      await res.text();
      await sleep(200); // the first rounds learn when the stored response expires
      const before = messages(gw.services.store);
      await sleep(400); // ~20 rounds of the response sweep
      expect(messages(gw.services.store) - before).to.equal(0);
      // And what a reservation sweep finds on SQLite with no hold outstanding: nothing, without asking the store.
      expect(await creditOf(gw.services.store).releaseStale(60_000)).to.equal(0);
      expect(messages(gw.services.store) - before).to.equal(0);
    } finally {
      await gw.stop();
    }
  });
});
