import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';

type Rec = Record<string, unknown>;
interface Audit {
  actor: string;
  role: string;
  source: string;
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
}

/** A console session opened over HTTP: its cookie and CSRF token. */
interface Signed {
  cookie: string;
  csrf: string;
  body: Rec;
}

async function signIn(
  gw: { url: string },
  key: string,
): Promise<Signed & { status: number; retryAfter: string | null }> {
  const res = await fetch(`${gw.url}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  });
  const body = (await res.json()) as Rec;
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    cookie: (res.headers.get('set-cookie') ?? '').split(';')[0],
    csrf: ((body.data as Rec | undefined)?.csrf_token as string) ?? '',
    body,
  };
}

async function call(gw: { url: string }, s: Signed, method: string, path: string, body?: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: {
      cookie: s.cookie,
      'x-csrf-token': s.csrf,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Rec };
}

const errorOf = (r: { body: Rec }) => r.body.error as { code: string; message: string };

async function auditLog(gw: { url: string }): Promise<Audit[]> {
  const r = await adminCall(gw, 'GET', '/v1/audit?limit=1000');
  expect(r.status).to.equal(200);
  return r.body.data as Audit[];
}

const sessionAudit = (log: Audit[]) => log.filter((r) => r.action.startsWith('session.'));

/**
 * Console sessions are server-side records (issue 43): sign-out, revocation, a rotated admin key and a disabled key
 * end them; they list and revoke in the console and the admin API; each opened or ended is audited without a secret;
 * the console sign-in goes through the failed-auth throttle.
 */
describe('console sessions (server-side)', function () {
  this.timeout(60_000);
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway(
      testConfig(
        {
          plugins: ['auth', { limits: { auth_failures: { max: 10, window_ms: 60_000 } } }, 'console', 'routing'],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(() => gw?.stop());

  it('sign-out ends the session: the old cookie is 401 afterwards, and both events are audited without a secret', async () => {
    const s = await signIn(gw, ADMIN_KEY);
    expect(s.status).to.equal(200);
    expect((s.body.data as Rec).role).to.equal('admin');
    expect((await call(gw, s, 'GET', '/console/api/accounts')).status).to.equal(200);
    const me = (await call(gw, s, 'GET', '/console/api/me')).body.data as Rec;
    expect((await call(gw, s, 'DELETE', '/console/api/session')).status).to.equal(200);
    const after = await call(gw, s, 'GET', '/console/api/accounts');
    expect(after.status).to.equal(401);
    expect(errorOf(after).code).to.equal('console_session_revoked');
    expect((await call(gw, s, 'POST', '/console/api/accounts', { name: 'late', credits: 9_000_000 })).status).to.equal(
      401,
    );
    const log = sessionAudit(await auditLog(gw)).filter((r) => r.target === me.session_id);
    expect(log.map((r) => r.action)).to.deep.equal(['session.end', 'session.open']);
    expect(log.every((r) => r.source === 'console' && r.actor === 'admin' && r.role === 'admin')).to.equal(true);
    const text = JSON.stringify(await auditLog(gw));
    expect(text).to.not.contain(ADMIN_KEY).and.not.contain(s.cookie.split('=')[1]).and.not.contain(s.csrf);
  });

  it('the admin lists the open sessions and revokes one (console and admin API); others get 403 role_required', async () => {
    const { key, hash } = await makeAccountKey(gw, { name: 'sess-acct' });
    const acct = await signIn(gw, key);
    expect((acct.body.data as Rec).role).to.equal('account');
    const admin = await signIn(gw, ADMIN_KEY);
    const listed = await call(gw, admin, 'GET', '/console/api/sessions');
    expect(listed.status).to.equal(200);
    const rows = listed.body.data as Rec[];
    const mine = rows.find((r) => r.label === (acct.body.data as Rec).key_label) as Rec;
    expect(mine).to.include({ role: 'account', opened_with: 'key', subject: hash });
    expect(rows.find((r) => r.current)).to.include({ role: 'admin', subject: 'admin', opened_with: 'admin_key' });
    expect(JSON.stringify(rows)).to.not.contain(acct.cookie.split('=')[1]).and.not.contain(acct.csrf);

    // The account may not list or revoke sessions, nor reach the admin API's sessions with its key.
    const refused = await call(gw, acct, 'GET', '/console/api/sessions');
    expect(refused.status).to.equal(403);
    expect(errorOf(refused).code).to.equal('role_required');
    expect(errorOf(refused).message).to.include("'admin'");
    expect((await adminCall(gw, 'GET', '/v1/sessions', undefined, key)).status).to.equal(403);

    // Revoked in the console: the account's cookie is 401 at once.
    expect((await call(gw, admin, 'DELETE', `/console/api/sessions/${String(mine.id)}`)).status).to.equal(200);
    expect((await call(gw, acct, 'GET', '/console/api/me')).status).to.equal(401);
    expect((await call(gw, admin, 'DELETE', `/console/api/sessions/${String(mine.id)}`)).status).to.equal(404);

    // The admin API: GET /v1/sessions lists the admin's console session; DELETE ends it.
    const api = await adminCall(gw, 'GET', '/v1/sessions');
    expect(api.status).to.equal(200);
    const adminSession = (api.body.data as Rec[]).find((r) => r.opened_with === 'admin_key') as Rec;
    expect((await adminCall(gw, 'DELETE', `/v1/sessions/${String(adminSession.id)}`)).status).to.equal(200);
    expect((await call(gw, admin, 'GET', '/console/api/me')).status).to.equal(401);
    const log = sessionAudit(await auditLog(gw));
    const revokes = log.filter((r) => r.action === 'session.revoke');
    expect(revokes.map((r) => [r.target, r.source])).to.deep.include.members([
      [mine.id, 'console'],
      [adminSession.id, 'admin_api'],
    ]);
  });

  it('disabling the key a session was opened with ends the session', async () => {
    const { key, hash } = await makeAccountKey(gw, { name: 'disable-me' });
    const s = await signIn(gw, key);
    expect((await call(gw, s, 'GET', '/console/api/me')).status).to.equal(200);
    expect((await adminCall(gw, 'PATCH', `/v1/keys/${hash}`, { disabled: true })).status).to.equal(200);
    expect((await call(gw, s, 'GET', '/console/api/me')).status).to.equal(401);
    expect((await adminCall(gw, 'PATCH', `/v1/keys/${hash}`, { disabled: false })).status).to.equal(200);
    expect((await call(gw, s, 'GET', '/console/api/me')).status, 'an ended session stays ended').to.equal(401);
    const ended = sessionAudit(await auditLog(gw)).find(
      (r) => r.action === 'session.end' && r.actor.includes(hash.slice(0, 12)),
    );
    expect(ended?.after).to.deep.equal({ ended_reason: 'key_disabled' });
  });

  it('12 wrong keys to the console sign-in from one address, then the right one: 429 with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await signIn(gw, `${ADMIN_KEY}-wrong-${i}`)).status);
    expect(statuses.slice(0, 10)).to.deep.equal(Array(10).fill(401));
    expect(statuses.slice(10)).to.deep.equal([429, 429]);
    const right = await signIn(gw, ADMIN_KEY);
    expect(right.status).to.equal(429);
    expect(Number(right.retryAfter)).to.be.greaterThan(0);
    expect(right.cookie).to.equal('');
  });
});

describe('console sessions and a rotated admin key', function () {
  this.timeout(60_000);

  it('a session opened with the old admin key is refused once the gateway restarts with a new one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-sessions-'));
    const cfg = (adminKey: string) =>
      testConfig(
        { store: { driver: 'sqlite', path: join(dir, 'store.db') }, plugins: ['auth', 'console', 'routing'] },
        { GATEWAY_ADMIN_KEY: adminKey },
      );
    let gw = await startTestGateway(cfg(ADMIN_KEY));
    try {
      const s = await signIn(gw, ADMIN_KEY);
      expect((await call(gw, s, 'GET', '/console/api/accounts')).status).to.equal(200);
      await gw.stop();
      const rotated = randomBytes(32).toString('hex');
      gw = await startTestGateway(cfg(rotated));
      const old = await call(gw, s, 'GET', '/console/api/accounts');
      expect(old.status).to.equal(401);
      expect(errorOf(old).code).to.equal('console_session_revoked');
      expect((await call(gw, s, 'POST', '/console/api/accounts', { name: 'x', credits: 9_000_000 })).status).to.equal(
        401,
      );
      const fresh = await signIn(gw, rotated);
      expect((await call(gw, fresh, 'GET', '/console/api/accounts')).status).to.equal(200);
      const r = await adminCall(gw, 'GET', '/v1/audit?limit=1000', undefined, rotated);
      const ended = (r.body.data as Audit[]).find((a) => a.action === 'session.end');
      expect(ended?.after).to.deep.equal({ ended_reason: 'admin_key_rotated' });
    } finally {
      await gw.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('console sessions on PostgreSQL, two replicas', function () {
  this.timeout(60_000);

  it('a session opened on one replica reads on the other, and sign-out on the other ends it on both', async function () {
    if (!POSTGRES_URL) {
      console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; the PostgreSQL sessions test did not run');
      this.skip();
    }
    const url = await freshPostgresUrl();
    const cfg = () =>
      testConfig(
        { store: { driver: 'postgres', url, pool_size: 4 }, plugins: ['auth', 'console', 'routing'] },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      );
    const a = await startTestGateway(cfg());
    const b = await startTestGateway(cfg());
    try {
      const s = await signIn(a, ADMIN_KEY);
      expect(s.status).to.equal(200);
      expect((await call(b, s, 'GET', '/console/api/accounts')).status).to.equal(200);
      expect((await call(b, s, 'POST', '/console/api/accounts', { name: 'on-b', credits: 1 })).status).to.equal(201);
      expect((await call(b, s, 'DELETE', '/console/api/session')).status).to.equal(200);
      expect((await call(a, s, 'GET', '/console/api/accounts')).status).to.equal(401);
      expect((await call(b, s, 'GET', '/console/api/accounts')).status).to.equal(401);
      const fromA = JSON.stringify(await auditLog(a));
      expect(fromA).to.equal(JSON.stringify(await auditLog(b)));
      const actions = (JSON.parse(fromA) as Audit[]).map((r) => `${r.action}:${r.source}`);
      expect(actions).to.include.members(['session.open:console', 'account.create:console', 'session.end:console']);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
