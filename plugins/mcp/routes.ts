/**
 * @module
 * The mcp plugin's endpoints: the MCP endpoint itself (./sessions.ts) and its admin API: the servers and their health,
 * the call log, and the allowlists of keys and accounts (reads need the viewer role, changes the operator role and
 * are audited).
 */
import type Router from '@koa/router';
import {
  bodyReader,
  existingSubject,
  paging,
  recordAudit,
  type AdminGuard,
  type Authenticate,
  type Store,
} from '../../src/plugin';
import { bodies } from './generated/bodies';
import type { Access } from './governance';
import { serversJson } from './section';
import type { Sessions } from './sessions';
import type { CallLog } from './store/repo';
import type { Upstreams } from './upstreams';

const readAccess = bodyReader<{ tools: string[] | null }>(bodies.access);

export interface RouteDeps {
  path: string;
  sessions: Sessions;
  authenticate: Authenticate;
  admin: AdminGuard | undefined;
  upstreams: Upstreams;
  access: Access;
  log: CallLog;
  store: Store;
}

export function registerMcpRoutes(router: Router, d: RouteDeps): void {
  const serve = d.sessions.handler(d.authenticate);
  router.get(d.path, serve);
  router.post(d.path, serve);
  router.delete(d.path, serve);
  const admin = d.admin;
  if (!admin) return;
  router.get('/v1/mcp/servers', async (ctx) => {
    await admin(ctx, 'viewer');
    ctx.body = { data: serversJson(d.upstreams) };
  });
  router.get('/v1/mcp/calls', async (ctx) => {
    await admin(ctx, 'viewer');
    const q = (k: string) => (typeof ctx.query[k] === 'string' ? (ctx.query[k] as string) : undefined);
    ctx.body = {
      data: await d.log.list({
        keyHash: q('key'),
        accountId: q('account'),
        server: q('server'),
        tool: q('tool'),
        outcome: q('outcome'),
        ...paging(ctx),
      }),
    };
  });
  for (const [subject, path] of [
    ['key', '/v1/mcp/access/keys/:id'],
    ['account', '/v1/mcp/access/accounts/:id'],
  ] as const) {
    router.get(path, async (ctx) => {
      await admin(ctx, 'viewer');
      ctx.body = {
        data: { tools: await d.access.get(subject, await existingSubject(d.store, subject, ctx.params.id)) },
      };
    });
    router.put(path, async (ctx) => {
      const principal = await admin(ctx, 'operator');
      const id = await existingSubject(d.store, subject, ctx.params.id);
      const { tools } = await readAccess(ctx);
      const before = await d.access.get(subject, id);
      await d.access.set(subject, id, tools);
      await recordAudit(d.store, ctx, principal, {
        action: 'mcp.access.set',
        target: `${subject}:${id}`,
        before: { tools: before },
        after: { tools },
      });
      ctx.body = { data: { tools } };
    });
  }
}
