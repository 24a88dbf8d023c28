import { expect } from 'chai';
import { escapeLiteral } from 'pg';
import { PostgresDb } from '../../src/store/engine/postgres-db';
import { inlineParams } from '../../src/store/engine/postgres-literals';
import { freshPostgresUrl, POSTGRES_URL } from '../helpers/postgres';

const OPTIONS = {
  poolSize: 2,
  statementTimeoutMs: 5000,
  lockTimeoutMs: 2000,
  idleInTransactionTimeoutMs: 5000,
  connectTimeoutMs: 2000,
};

/** Values a parameter may carry, as text: quotes, backslashes, placeholders and newlines inside them. */
const TEXTS = ["it's", "back\\slash \\' mixed", 'a ? b', "'?'", 'line\nbreak\ttab', 'ünïcødé 😀', '', "E'x'"];

describe('PostgreSQL transactions sent as messages of statements (Db.rounds)', function () {
  this.timeout(30_000);
  let db: PostgresDb;
  before(async function () {
    if (!POSTGRES_URL) {
      console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; the rounds test did not run');
      return this.skip();
    }
    db = new PostgresDb(await freshPostgresUrl(), OPTIONS);
    await db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT, n BIGINT, f DOUBLE PRECISION, b BOOLEAN)');
  });
  after(async () => db?.close());

  it("stores every parameter in a message as a parameter would, and reads each statement's rows", async () => {
    const rows = TEXTS.map((s, i) => [i, s, 2 ** 53 - 1 - i, i + 0.25, i % 2 === 0] as const);
    const out = await db.rounds(async (send) => {
      const inserted = await send(
        rows.map((r) => ({
          sql: 'INSERT INTO t (id, s, n, f, b) VALUES (?, ?, ?, ?, ?) RETURNING id',
          params: [...r],
        })),
      );
      expect(inserted.map((r) => r[0].id)).to.deep.equal(rows.map((r) => r[0]));
      return send([{ sql: "SELECT id, s, n, f, b, '?' AS q FROM t WHERE id >= ? ORDER BY id", params: [0] }], true);
    }, false);
    expect(out[0]).to.deep.equal(rows.map(([id, s, n, f, b]) => ({ id, s, n: String(n), f, b, q: '?' })));
    const nulls = await db.rounds((send) => send([{ sql: 'SELECT ? AS x', params: [null] }]), false);
    expect(nulls[0]).to.deep.equal([{ x: null }]);
  });

  it('a failing statement in a later message rolls back the whole transaction, and the session is usable after', async () => {
    let failed: unknown;
    try {
      await db.rounds(async (send) => {
        await send([{ sql: 'INSERT INTO t (id, s) VALUES (?, ?)', params: [100, 'kept?'] }]);
        await send([{ sql: 'INSERT INTO t (id, s) VALUES (?, ?)', params: [100, 'twice'] }], true);
      }, false);
    } catch (e) {
      failed = e;
    }
    expect((failed as { code?: string }).code).to.equal('23505');
    for (let i = 0; i < 3; i++) expect(await db.get('SELECT id FROM t WHERE id = ?', [100])).to.equal(undefined);
  });

  it('refuses more parameters than placeholders, before sending anything', async () => {
    let failed: unknown;
    try {
      await db.rounds((send) => send([{ sql: 'SELECT ?', params: [1, 2] }]), false);
    } catch (e) {
      failed = e;
    }
    expect(String(failed)).to.match(/1 placeholders for 2 parameters/);
  });
});

describe('parameters written into statements as literals', () => {
  it("quote text as pg's escapeLiteral does, numbers and booleans as their text, null as NULL", () => {
    for (const t of [...TEXTS, "''", '\\\\', "\\'", 'x'.repeat(10_000) + "'"])
      expect(inlineParams('SELECT ?', [t])).to.equal(`SELECT ${escapeLiteral(t)}`);
    expect(inlineParams("SELECT ?, '?', ?, ?", [1.5, true, null])).to.equal("SELECT '1.5', '?', 'true', NULL");
  });
});
