import { expect } from 'chai';
import { postJson, type TestGateway } from '../../helpers/gateway';
import { toNano } from '../../../src/store/money';
import { creditOf } from '../../helpers/store';

export type Key = { key: string; accountId: string; hash: string };

/** Wait until no reservation of the account is open (streams settle after their last byte). */
export async function settled(gw: TestGateway, accountId: string): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if ((await creditOf(gw.services.store).openReservations(accountId)) === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('reservations still open');
}

/**
 * The three invariants of the credit promise: key usage within its limit, account balance
 * not below zero, the account's ledger == its generation records == the usage.cost returned
 * to the client (`returned`: every answer on the account), the key's usage == its records. Returns the key's usage (nano-credits).
 */
export async function books(gw: TestGateway, k: Key, returned: number[]): Promise<number> {
  await settled(gw, k.accountId);
  const store = gw.services.store;
  const key = (await store.keys.get(k.hash))!;
  const account = (await store.accounts.get(k.accountId))!;
  if (key.limit !== null) expect(key.usage, 'key usage within its limit').to.be.at.most(key.limit);
  expect(account.credits - account.usage, 'account balance').to.be.at.least(0);
  expect(key.reserved).to.equal(0);
  const list = await store.generations.list({ accountId: k.accountId, limit: 1000 });
  const records = list.reduce((s, g) => s + g.cost, 0);
  const ledger = await store.ledger.sum(k.accountId);
  expect(ledger, 'ledger == records').to.equal(records);
  expect(ledger, 'ledger == sum of usage.cost returned').to.equal(returned.reduce((s, c) => s + c, 0));
  expect(key.usage, 'key usage == its records').to.equal(
    list.filter((g) => g.keyHash === k.hash).reduce((s, g) => s + g.cost, 0),
  );
  return key.usage;
}

/** No generation of the account has an overrun: an honest upstream stayed within every reservation. */
export async function noOverruns(gw: TestGateway, accountId: string): Promise<number> {
  const records = await gw.services.store.generations.list({ accountId, limit: 1000 });
  for (const g of records)
    expect((await creditOf(gw.services.store).overrun(g.id))?.reason ?? null, g.id).to.equal(null);
  // Refused requests (402 and other 4xx) have a light record of their own (httpStatus set): count the settled ones.
  return records.filter((g) => g.httpStatus == null).length;
}

type Usage = { cost?: number };
type Frame = { usage?: Usage; response?: { usage?: Usage | null } };

/** The `data:` payloads of an SSE body (named events or not), parsed; `[DONE]` left out. */
export function sseFrames(text: string): Frame[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice('data: '.length)) as Frame);
}

/** usage.cost of an answer (chat, embeddings or response object) or of a stream's last frame that carries it. */
export function returnedCost(body: Frame | Frame[]): number | undefined {
  const of = (f: Frame) => f.usage?.cost ?? f.response?.usage?.cost;
  const list = Array.isArray(body) ? body : [body];
  const found = list.map(of).filter((c): c is number => typeof c === 'number');
  return found.length === 0 ? undefined : toNano(found[found.length - 1]);
}

export interface Burst {
  statuses: number[];
  /** usage.cost (nano-credits) of every 200 answer. */
  costs: number[];
  bodies: Array<Frame | Frame[]>;
}

/** Send `count` requests at once to `path` with key `k`; only 200 and 402 are acceptable answers. */
export async function burst(
  gw: TestGateway,
  path: string,
  k: Key,
  body: (i: number) => unknown,
  count: number,
): Promise<Burst> {
  const res = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const r = await postJson(`${gw.url}${path}`, body(i), { authorization: `Bearer ${k.key}` });
      const text = await r.text();
      return { status: r.status, text, body: text.startsWith('{') ? (JSON.parse(text) as Frame) : sseFrames(text) };
    }),
  );
  const bad = res.find((r) => r.status !== 200 && r.status !== 402);
  expect(bad?.status ?? 200, bad?.text).to.equal(200);
  const costs: number[] = [];
  for (const r of res) {
    if (r.status !== 200) continue;
    const c = returnedCost(r.body);
    expect(c, `usage.cost in ${r.text.slice(0, 300)}`).to.be.a('number');
    costs.push(c!);
  }
  return { statuses: res.map((r) => r.status), costs, bodies: res.map((r) => r.body) };
}

export const served = (statuses: number[]) => statuses.filter((s) => s === 200).length;
