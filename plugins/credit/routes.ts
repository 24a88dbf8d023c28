import type Router from '@koa/router';
import { errors, fromNano, generationJson, getAuthenticate, type SharedServices, type Store } from '../../src/plugin';
import { CreditReservations } from './store/repo';

const PERIODS: Record<string, number> = { day: 86_400_000, week: 7 * 86_400_000, month: 30 * 86_400_000 };

/** GET /v1/generation?id= (the key's account, or admin) and GET /v1/rankings?period= (admin). */
export function registerGenerationRoutes(router: Router, store: Store, shared: SharedServices): void {
  router.get('/v1/generation', async (ctx) => {
    const auth = getAuthenticate(shared);
    if (!auth) throw errors.forbidden('auth_not_configured', 'Generation records need the auth plugin');
    const p = await auth(ctx);
    const id = typeof ctx.query.id === 'string' ? ctx.query.id : '';
    if (!id || id.length > 128) throw errors.invalidRequest('id is required: the completion id', 'id', 'invalid_id');
    const g = await store.generations.get(id);
    // Another account's record is as unknown as a missing one.
    if (!g || (!p.isAdmin && g.accountId !== p.accountId))
      throw errors.notFound('generation_not_found', `No generation '${id}'`, 'id');
    // Usage the upstream reported beyond the reservation (or malformed): what the operator carried, and why.
    const overrun = await CreditReservations.of(store).overrun(g.id);
    ctx.body = {
      data: {
        ...generationJson(g),
        overrun: overrun ? { credits: fromNano(overrun.amount), reason: overrun.reason } : null,
      },
    };
  });

  // The caller's own generation records, newest first; ?user= and ?metadata.<key>=<value> filter them.
  router.get('/v1/generations', async (ctx) => {
    const auth = getAuthenticate(shared);
    if (!auth) throw errors.forbidden('auth_not_configured', 'Generation records need the auth plugin');
    const p = await auth(ctx);
    const limit = Math.min(Math.max(Number.parseInt(String(ctx.query.limit ?? '100'), 10) || 100, 1), 1000);
    const user = typeof ctx.query.user === 'string' ? ctx.query.user : undefined;
    const meta = Object.entries(ctx.query).filter(
      ([k, v]) => k.startsWith('metadata.') && typeof v === 'string',
    ) as Array<[string, string]>;
    const rows = await store.generations.list({
      accountId: p.isAdmin ? undefined : p.accountId,
      user,
      limit: meta.length ? 1000 : limit,
    });
    const matched = rows
      .filter((g) => meta.every(([k, v]) => String(g.metadata?.[k.slice('metadata.'.length)] ?? '') === v))
      .slice(0, limit);
    ctx.body = { data: matched.map(generationJson) };
  });

  router.get('/v1/rankings', async (ctx) => {
    const auth = getAuthenticate(shared);
    if (!auth) throw errors.forbidden('auth_not_configured', 'Rankings need the auth plugin');
    const p = await auth(ctx);
    if (!p.isAdmin) throw errors.forbidden('admin_key_required', 'This endpoint needs the admin key');
    const period = typeof ctx.query.period === 'string' ? ctx.query.period : 'day';
    const span = Object.hasOwn(PERIODS, period) ? PERIODS[period] : undefined;
    if (!span) throw errors.invalidRequest('period must be day, week or month', 'period', 'invalid_period');
    const rows = await store.generations.rankings(Date.now() - span);
    const apps = new Map<
      string,
      {
        referer: string | null;
        title: string | null;
        requests: number;
        tokens: number;
        models: Array<{ model: string; requests: number; tokens: number }>;
      }
    >();
    for (const r of rows) {
      const k = `${r.referer ?? ''}\u0000${r.title ?? ''}`;
      const app = apps.get(k) ?? { referer: r.referer, title: r.title, requests: 0, tokens: 0, models: [] };
      app.requests += r.requests;
      app.tokens += r.tokens;
      app.models.push({ model: r.model, requests: r.requests, tokens: r.tokens });
      apps.set(k, app);
    }
    ctx.body = { period, data: [...apps.values()].sort((a, b) => b.tokens - a.tokens || b.requests - a.requests) };
  });
}
