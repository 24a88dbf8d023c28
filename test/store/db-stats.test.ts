import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {} from '../../src/store/index';
import { ResponseRepo } from '../../plugins/storage/store/repo';
import { creditOf, openChainStore } from '../helpers/store';
import type { StoreStats } from '../../src/store/stats';
import { generationRecord } from '../helpers/generation';

describe('gateway db stats', function () {
  this.timeout(60000);

  it('prints rows and bytes per table and the growth per 1,000 requests since the last run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-stats-'));
    const path = join(dir, 'gateway.db');
    const file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      JSON.stringify({
        store: { driver: 'sqlite', path },
        providers: [{ name: 'mock', type: 'mock' }],
        models: [{ id: 'm', deployments: [{ provider: 'mock', model: 'x' }] }],
      }),
    );
    const stats = () =>
      JSON.parse(
        execFileSync(
          process.execPath,
          ['--require', 'tsx/cjs', 'src/cli.ts', 'db', 'stats', '--json', '--config', file],
          { encoding: 'utf8' },
        ),
      ) as StoreStats;
    const requests = async (n: number) => {
      const store = await openChainStore({ driver: 'sqlite', path }, {});
      const a = await store.accounts.create({ name: `s-${Date.now()}-${Math.random()}`, credits: 1e12 }); // names are unique
      for (let i = 0; i < n; i++) {
        const r = await creditOf(store).reserve(a.id, null, 10);
        if (!r.ok) throw new Error('refused');
        const id = `g${Date.now()}-${i}`;
        await creditOf(store).settle(r.id, 10, generationRecord({ id, accountId: a.id }));
        await new ResponseRepo(store.db).put({
          id,
          accountId: a.id,
          model: 'm',
          status: 'completed',
          body: { id, output: 'y'.repeat(500) },
          createdAt: Date.now(),
          expiresAt: null,
        });
      }
      await store.close();
    };
    await requests(200);
    const first = stats();
    const rows = Object.fromEntries(first.tables.map((t) => [t.table, t.rows]));
    expect(rows).to.include({
      generations: 200,
      credit_ledger: 200,
      responses: 200,
      credit_reservations: 0,
      accounts: 1,
    });
    expect(first.requests).to.equal(200);
    expect(first.perThousand.sinceLast).to.equal(null);
    expect(first.perThousand.average).to.be.greaterThan(500_000); // each request keeps more than its 500-byte answer
    await new Promise((r) => setTimeout(r, 5));
    await requests(300);
    const second = stats();
    expect(second.requests).to.equal(500);
    expect(second.perThousand.requestsSinceLast).to.equal(300);
    expect(second.perThousand.sinceLast).to.be.greaterThan(500_000).and.below(20_000_000);
    const text = execFileSync(
      process.execPath,
      ['--require', 'tsx/cjs', 'src/cli.ts', 'db', 'stats', '--config', file],
      { encoding: 'utf8' },
    );
    expect(text)
      .to.match(/^table\s+rows\s+bytes\n/)
      .and.match(/generations\s+500\s+\d+/)
      .and.match(/per 1,000 requests: [\d.]+ MB on average/);
  });
});
