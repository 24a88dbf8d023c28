import { expect } from 'chai';
import { openStore, type Store } from '../../src/store/index';
import { redactAudit } from '../../src/store/audit';
import { POSTGRES_URL, freshPostgresUrl } from '../helpers/postgres';

/** The audit log's store (issue 43): append-only, filtered newest first, never a secret, expired by age. */
function auditContract(name: string, open: () => Promise<[Store, Store]>) {
  describe(`audit log on ${name}`, function () {
    this.timeout(20000);
    let a: Store;
    let b: Store;
    before(async () => {
      [a, b] = await open();
    });
    after(async () => {
      await a.close();
      if (b !== a) await b.close();
    });

    it('appends, lists newest first with filters and pages, and every handle on the store reads the same log', async () => {
      const t0 = Date.now();
      await a.audit.append(
        {
          actor: 'admin',
          role: 'admin',
          source: 'admin_api',
          action: 'account.create',
          target: 'acct_1',
          after: { name: 'team', credits: 5 },
        },
        t0,
      );
      await b.audit.append(
        {
          actor: 'k1',
          role: 'operator',
          source: 'console',
          address: '10.0.0.1',
          action: 'key.update',
          target: 'hash1',
          before: { limit: 1 },
          after: { limit: 2 },
        },
        t0 + 1,
      );
      await a.audit.append(
        { actor: 'cli', role: 'admin', source: 'cli', action: 'credits.add', target: 'acct_1', after: { amount: 3 } },
        t0 + 2,
      );
      const all = await b.audit.list({ limit: 10 });
      expect(all.map((r) => r.action)).to.deep.equal(['credits.add', 'key.update', 'account.create']);
      expect(await a.audit.list({ limit: 10 })).to.deep.equal(all);
      expect(all[1]).to.include({
        actor: 'k1',
        role: 'operator',
        source: 'console',
        address: '10.0.0.1',
        target: 'hash1',
      });
      expect(all[1].before).to.deep.equal({ limit: 1 });
      expect(all[1].after).to.deep.equal({ limit: 2 });
      expect((await a.audit.list({ target: 'acct_1', limit: 10 })).map((r) => r.action)).to.deep.equal([
        'credits.add',
        'account.create',
      ]);
      expect((await a.audit.list({ source: 'console', limit: 10 })).length).to.equal(1);
      const page = await a.audit.list({ limit: 2 });
      expect((await a.audit.list({ limit: 2, before: page[1].id })).map((r) => r.action)).to.deep.equal([
        'account.create',
      ]);
      expect(await a.audit.list({ since: t0 + 2, limit: 10 })).to.have.length(1);
    });

    it('keeps no secret: secret fields and raw keys are redacted, hashes kept', async () => {
      await a.audit.append({
        actor: 'admin',
        role: 'admin',
        source: 'admin_api',
        action: 'key.create',
        target: 'hash2',
        after: {
          key: 'sk-abcdefghijklmnopqrstuvwxyz',
          key_hash: 'hash2',
          name: 'uses sk-0123456789abcdefghijkl here',
          client_secret: 's3cr3t',
          nested: { api_key: 'x', password: 'y' },
        },
      });
      const [r] = await a.audit.list({ action: 'key.create', limit: 1 });
      expect(JSON.stringify(r)).not.to.match(/sk-abc|sk-0123|s3cr3t/);
      expect(r.after).to.deep.equal({
        key: '[redacted]',
        key_hash: 'hash2',
        name: 'uses [redacted] here',
        client_secret: '[redacted]',
        nested: { api_key: '[redacted]', password: '[redacted]' },
      });
    });

    it('expires records past the retention and keeps the rest', async () => {
      const old = Date.now() - 10 * 86_400_000;
      await a.audit.append({ actor: 'admin', role: 'admin', source: 'cli', action: 'old.change' }, old);
      expect(await a.audit.expire(5 * 86_400_000)).to.equal(1);
      expect(await a.audit.list({ action: 'old.change', limit: 5 })).to.have.length(0);
      expect((await a.audit.list({ limit: 50 })).length).to.be.greaterThan(0);
      expect(await a.audit.expire(0)).to.equal(0);
    });
  });
}

auditContract('SQLite', async () => {
  const s = await openStore({ driver: 'memory' });
  return [s, s];
});

if (POSTGRES_URL)
  auditContract('PostgreSQL, two replicas', async () => {
    const url = await freshPostgresUrl();
    return [
      await openStore({ driver: 'postgres', url, pool_size: 2 }),
      await openStore({ driver: 'postgres', url, pool_size: 2 }),
    ];
  });
else describe('audit log on PostgreSQL', () => it('needs GATEWAY_TEST_POSTGRES_URL'));

describe('redactAudit', () => {
  it('leaves plain values and bounds the depth', () => {
    expect(redactAudit({ a: 1, b: [true, null, 'x'] })).to.deep.equal({ a: 1, b: [true, null, 'x'] });
    let deep: unknown = 'end';
    for (let i = 0; i < 20; i++) deep = { d: deep };
    expect(JSON.stringify(redactAudit(deep))).to.contain('[deep]');
  });
});
