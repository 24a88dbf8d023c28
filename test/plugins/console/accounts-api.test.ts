import { expect } from 'chai';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall } from '../../helpers/accounts';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';

type Account = { id: string; name: string; credits: number; usage: number; settings: Record<string, string> };

/**
 * GET /console/api/accounts: searched, sorted and keyset-paged on the server, every account reachable in each order;
 * on SQLite, and on PostgreSQL when GATEWAY_TEST_POSTGRES_URL is set (its bigint balances come back as text).
 */
for (const driver of ['sqlite', 'postgres'] as const)
  describe(`console accounts API: search, sort, pages (${driver})`, function () {
    this.timeout(60_000);
    let gw: TestGateway;
    let cookie = '';
    const made: Array<{ id: string; name: string; balance: number }> = [];
    const get = async (path: string) => {
      const res = await fetch(`${gw.url}/console/api/${path}`, { headers: { cookie } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    /** Every page of a query, `limit` a page. */
    async function walk(params: string, limit = 7): Promise<{ rows: Account[]; totals: number[] }> {
      const rows: Account[] = [];
      const totals: number[] = [];
      let cursor: string | null = null;
      do {
        const r = await get(`accounts?${params}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        rows.push(...(r.body.data as Account[]));
        totals.push(r.body.total as number);
        cursor = r.body.next_cursor as string | null;
      } while (cursor);
      return { rows, totals };
    }

    before(async function () {
      if (driver === 'postgres' && !POSTGRES_URL) {
        console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; the PostgreSQL accounts test did not run');
        this.skip();
      }
      const store =
        driver === 'postgres' ? { store: { driver: 'postgres', url: await freshPostgresUrl(), pool_size: 4 } } : {};
      gw = await startTestGateway(
        testConfig({ ...store, plugins: ['auth', 'console', 'limits', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
      );
      // Names out of creation order, mixed case; balances with ties (the id breaks them).
      for (let i = 0; i < 30; i++) {
        const name = `${i % 2 ? 'Team' : 'team'}-${String((i * 11) % 30).padStart(2, '0')}`;
        const credits = (i * 7) % 5;
        const r = await adminCall(gw, 'POST', '/v1/accounts', { name, credits });
        made.push({ id: (r.body.data as { id: string }).id, name, balance: credits });
      }
      const res = await fetch(`${gw.url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: ADMIN_KEY }),
      });
      cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    });
    after(() => gw?.stop());

    it('newest first by default; created, name and balance each way: every account once, in order', async () => {
      const byDefault = await walk('');
      expect(byDefault.rows.map((a) => a.id)).to.deep.equal(made.map((a) => a.id).reverse());
      expect(new Set(byDefault.totals)).to.deep.equal(new Set([30]));
      const oldest = await walk('order=oldest');
      expect(oldest.rows.map((a) => a.id)).to.deep.equal(made.map((a) => a.id));

      const names = (await walk('sort=name')).rows.map((a) => a.name.toLowerCase());
      expect(names).to.deep.equal([...names].sort());
      expect(names).to.have.length(30);
      const namesDesc = (await walk('sort=name&dir=desc')).rows.map((a) => a.name.toLowerCase());
      expect(namesDesc).to.deep.equal([...names].reverse());

      const rich = (await walk('sort=balance', 4)).rows;
      expect(rich).to.have.length(30);
      expect(new Set(rich.map((a) => a.id)).size).to.equal(30);
      const balances = rich.map((a) => a.credits - a.usage);
      expect(balances).to.deep.equal([...balances].sort((x, y) => y - x));
      const poor = (await walk('sort=balance&dir=asc', 4)).rows.map((a) => a.credits - a.usage);
      expect(poor).to.deep.equal([...poor].sort((x, y) => x - y));
    });

    it('a search by a part of the name (any case) or the whole id, with its total; bad parameters are 400s', async () => {
      const found = await walk('q=TEAM-0');
      expect(found.rows.map((a) => a.name).sort()).to.deep.equal(
        made
          .filter((a) => a.name.toLowerCase().startsWith('team-0'))
          .map((a) => a.name)
          .sort(),
      );
      expect(found.totals[0]).to.equal(10);
      const byId = await get(`accounts?q=${made[3].id}`);
      expect((byId.body.data as Account[]).map((a) => a.id)).to.deep.equal([made[3].id]);
      expect((await get('accounts?q=100%25')).body.total, 'a % is a character').to.equal(0);

      const badSort = await get('accounts?sort=usage');
      expect([badSort.status, (badSort.body.error as { param: string }).param]).to.deep.equal([400, 'sort']);
      expect((await get('accounts?dir=up')).status).to.equal(400);
      // A cursor made for another sort is refused, not misread.
      const page = await get('accounts?sort=name&limit=2');
      const other = await get(`accounts?sort=balance&cursor=${page.body.next_cursor as string}`);
      expect([other.status, (other.body.error as { code: string }).code]).to.deep.equal([400, 'invalid_cursor']);
    });

    it("each account carries its sections' summaries (the Settings column)", async () => {
      await adminCall(gw, 'PUT', `/v1/accounts/${made[0].id}/limits`, { rate_limits: { rpm: 9 } });
      const r = await get(`accounts?q=${made[0].id}`);
      expect((r.body.data as Account[])[0].settings).to.deep.equal({ limits: '9 rpm' });
      const other = await get(`accounts?q=${made[1].id}`);
      expect((other.body.data as Account[])[0].settings).to.deep.equal({});
    });
  });
