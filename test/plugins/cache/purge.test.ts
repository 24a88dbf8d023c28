import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { CACHE_DEFAULTS, cacheGateway, cacheModels, chat, providersOf, scriptedUpstream } from './helpers';

const run = promisify(execFile);
const ask = (content: string, model = 'up/m') => ({ model, temperature: 0, messages: [{ role: 'user', content }] });

describe('cache plugin: TTL and purge', function () {
  this.timeout(60000);
  let up: MockUpstream;
  let gw: TestGateway;
  const dir = mkdtempSync(join(tmpdir(), 'gw-cache-purge-'));
  const store = { driver: 'sqlite', path: join(dir, 'g.db') };

  before(async () => {
    up = await scriptedUpstream().start();
    gw = await cacheGateway(up, {}, { store });
  });
  after(async () => {
    await gw?.stop();
    await up?.stop();
  });

  it('an entry is served until its TTL, then missed', async () => {
    const short = await cacheGateway(up, { ttl_seconds: 1 });
    try {
      const { key } = await makeAccountKey(short);
      expect((await chat(short, key, ask('ttl'))).cache).to.equal('miss');
      expect((await chat(short, key, ask('ttl'))).cache).to.equal('hit');
      await sleep(1100);
      expect((await chat(short, key, ask('ttl'))).cache).to.equal('miss');
    } finally {
      await short.stop();
    }
  });

  it('the admin API purges by entry, key, account, model and age; each purge is audited', async () => {
    const a = await makeAccountKey(gw);
    const b = await makeAccountKey(gw);
    const state = async () => [
      (await chat(gw, a.key, ask('one'))).cache,
      (await chat(gw, a.key, ask('two', 'up/other'))).cache,
      (await chat(gw, b.key, ask('one'))).cache,
    ];
    const purge = async (body: Record<string, unknown>) => {
      const r = await adminCall(gw, 'POST', '/v1/cache/purge', body);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      return (r.body.data as { deleted: number }).deleted;
    };
    expect(await state()).to.deep.equal(['miss', 'miss', 'miss']);
    expect(await purge({ account_id: a.accountId })).to.equal(2);
    expect(await state()).to.deep.equal(['miss', 'miss', 'hit']);
    expect(await purge({ model: 'up/other' })).to.equal(1);
    expect(await state()).to.deep.equal(['hit', 'miss', 'hit']);
    expect(await purge({ key_hash: b.hash })).to.equal(1);
    expect(await state()).to.deep.equal(['hit', 'hit', 'miss']);
    const hit = await chat(gw, a.key, ask('one'));
    const entry = (
      (await adminCall(gw, 'GET', `/v1/generation?id=${String(hit.json.id)}`)).body.data as {
        cache_entry: string;
      }
    ).cache_entry;
    expect(await purge({ entry })).to.equal(1);
    expect(await state()).to.deep.equal(['miss', 'hit', 'hit']);
    // By age: the three entries are over a second old, a new one is not.
    await sleep(1100);
    await chat(gw, b.key, ask('new'));
    expect(await purge({ older_than_seconds: 1 })).to.equal(3);
    expect((await chat(gw, b.key, ask('new'))).cache).to.equal('hit');
    const audit = await adminCall(gw, 'GET', '/v1/audit?action=cache.purge');
    const rows = audit.body.data as Array<{ action: string; after: { deleted: number }; actor: string }>;
    expect(rows.map((r) => r.after.deleted)).to.deep.equal([3, 1, 1, 1, 2]);
  });

  it('a purge needs the operator role and a filter', async () => {
    const k = await makeAccountKey(gw);
    expect((await adminCall(gw, 'POST', '/v1/cache/purge', { all: true }, k.key)).status).to.equal(403);
    expect((await adminCall(gw, 'POST', '/v1/cache/purge', {})).status).to.equal(400);
    expect((await adminCall(gw, 'POST', '/v1/cache/purge', { model: 'x', extra: 1 })).status).to.equal(400);
  });

  it('gateway cache purge (CLI) deletes the entries the flags name', async () => {
    const { key, accountId } = await makeAccountKey(gw);
    await chat(gw, key, ask('cli'));
    expect((await chat(gw, key, ask('cli'))).cache).to.equal('hit');
    await gw.stop();
    const cfg = join(dir, 'g.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        store,
        providers: providersOf(up),
        models: cacheModels(),
        plugins: ['auth', 'credit', 'storage', { cache: CACHE_DEFAULTS }, 'routing'],
      }),
    );
    const cli = async (...args: string[]) =>
      (
        await run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', ...args, '--config', cfg], {
          env: { ...process.env, GATEWAY_ADMIN_KEY: ADMIN_KEY },
        })
      ).stdout;
    expect(JSON.parse(await cli('cache', 'purge', '--account', accountId, '--json'))).to.deep.equal({ deleted: 1 });
    const refused = await cli('cache', 'purge').then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(refused?.code).to.equal(2);
    expect(refused?.stderr).to.include('cache purge needs');
    gw = await cacheGateway(up, {}, { store });
    expect((await chat(gw, key, ask('cli'))).cache).to.equal('miss');
  });
});
