import { Client } from 'pg';
import { randomBytes } from 'node:crypto';

/** The PostgreSQL URL tests use, or undefined when GATEWAY_TEST_POSTGRES_URL is not set (tests then say so and skip). */
export const POSTGRES_URL = process.env.GATEWAY_TEST_POSTGRES_URL || undefined;

/**
 * A URL for a new, empty schema on the test server, so that test files running one
 * after another (or two gateways in one test) share nothing they did not mean to.
 */
export async function freshPostgresUrl(base = POSTGRES_URL): Promise<string> {
  if (!base) throw new Error('GATEWAY_TEST_POSTGRES_URL is not set');
  const schema = `gw_test_${randomBytes(6).toString('hex')}`;
  const c = new Client({ connectionString: base });
  await c.connect();
  await c.query(`CREATE SCHEMA ${schema}`);
  await c.end();
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}
