import type Router from '@koa/router';
import type { ServiceContext } from './context';
import {
  deploymentKey,
  errors,
  fromNano,
  generationJson,
  hasRole,
  HEALTH,
  num,
  numOrNull,
  STORED_RESPONSES,
} from '../../src/plugin';
import { serveActivity } from './activity';
import { limitParam, qs, timeParam, type Scope } from './params';
import { listRecords } from './records';
import { series, WINDOWS, type SeriesBucket } from './series';
import { OUTCOMES, type Outcome } from './store/rollups';
import type { ConsoleSession } from './session';
import { dayOf, dayString } from './usage';

const STATUSES = ['completed', 'incomplete', 'error'] as const;
const OUTCOME_FILTERS: readonly string[] = [...OUTCOMES, 'error'];

type Ctx = Parameters<Router.Middleware>[0];

const scoped = (s: Scope, requested: string | undefined) => (s.isAdmin ? requested : s.accountId);

/** Overview, activity records, analytics, models and rankings for the console; every query is scoped to the session. */
export function registerUsageRoutes(router: Router, c: ServiceContext): void {
  const { store, usage, need } = c;
  router.get('/console/api/overview', async (ctx) => {
    ctx.body = await overviewPage(c, await need(ctx), ctx);
  });
  router.get('/console/api/records', async (ctx) => {
    ctx.body = await recordsPage(c, await need(ctx), ctx);
  });
  router.get('/console/api/records/:id', async (ctx) => {
    const s = await need(ctx);
    const g = await store.generations.get(ctx.params.id.slice(0, 200));
    if (!g || (!s.isAdmin && g.accountId !== s.accountId))
      throw errors.notFound('generation_not_found', 'No such generation record');
    const stored = await c.shared.get(STORED_RESPONSES)?.get(g.id);
    ctx.body = {
      data: { ...generationJson(g), account_id: g.accountId, api_key_hash: g.keyHash, response: stored?.body ?? null },
    };
  });
  router.get('/console/api/activity', async (ctx) => serveActivity(ctx, usage, await need(ctx)));
  router.get('/console/api/models', async (ctx) => {
    ctx.body = await modelsPage(c, await need(ctx));
  });
  router.get('/console/api/rankings', async (ctx) => {
    ctx.body = await rankingsPage(c, await need(ctx), ctx);
  });
}

/**
 * The overview: the window's series (minute aggregates, exact), its totals, and 30 daily totals (daily aggregates);
 * every number from aggregates kept as records are written, none from the records.
 */
async function overviewPage({ store, usage }: ServiceContext, s: Scope, ctx: Ctx) {
  const win = qs(ctx, 'window', 4) ?? '1h';
  const w = Object.hasOwn(WINDOWS, win) ? WINDOWS[win] : undefined;
  if (!w)
    throw errors.invalidRequest(
      `window must be one of ${Object.keys(WINDOWS).join(', ')}`,
      'window',
      'invalid_parameter',
    );
  const accountId = scoped(s, qs(ctx, 'account_id', 64));
  const buckets = await series(store.db, { accountId, keyHash: qs(ctx, 'key_hash', 64) }, w);
  const today = dayOf(Date.now());
  const daily = await usage.query({ fromDay: today - 29, toDay: today, accountId, groupBy: ['date'], limit: 31 });
  return {
    window: win,
    bucket_seconds: w.minutes * 60,
    totals: bucketJson(sumBuckets(buckets)),
    series: buckets.map(bucketJson),
    // Every one of the 30 days, oldest first, zero where nothing happened.
    daily: Array.from({ length: 30 }, (_, i) => {
      const day = today - 29 + i;
      const d = daily.find((r) => r.day === day);
      return {
        date: dayString(day),
        requests: d?.requests ?? 0,
        errors: d?.errors ?? 0,
        tokens: d ? d.promptTokens + d.completionTokens : 0,
        usage: fromNano(d?.cost ?? 0),
      };
    }),
  };
}

function sumBuckets(list: readonly SeriesBucket[]): SeriesBucket {
  const t: SeriesBucket = { ...list[0], requests: 0, errors: 0, timeouts: 0, cancelled: 0, clientErrors: 0 };
  Object.assign(t, { tokens: 0, cost: 0, latencyMsSum: 0, latencyMsMax: 0 });
  for (const b of list) {
    for (const k of ['requests', 'errors', 'timeouts', 'cancelled', 'clientErrors', 'tokens', 'cost'] as const)
      t[k] += b[k];
    t.latencyMsSum += b.latencyMsSum;
    t.latencyMsMax = Math.max(t.latencyMsMax, b.latencyMsMax);
  }
  return t;
}

function bucketJson(b: SeriesBucket) {
  return {
    t: new Date(b.t).toISOString(),
    requests: b.requests,
    errors: b.errors,
    timeouts: b.timeouts,
    cancelled: b.cancelled,
    client_errors: b.clientErrors,
    upstream_errors: b.errors - b.timeouts - b.clientErrors,
    tokens: b.tokens,
    cost: fromNano(b.cost),
    mean_latency_ms: b.requests ? Math.round(b.latencyMsSum / b.requests) : null,
    max_latency_ms: b.requests ? Math.round(b.latencyMsMax) : null,
  };
}

/** One page of generation records, filtered, newest first. */
async function recordsPage({ store }: ServiceContext, s: Scope, ctx: Ctx) {
  const status = qs(ctx, 'status', 20);
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
    throw errors.invalidRequest(`status must be one of ${STATUSES.join(', ')}`, 'status', 'invalid_parameter');
  const outcome = qs(ctx, 'outcome', 20);
  if (outcome !== undefined && !OUTCOME_FILTERS.includes(outcome))
    throw errors.invalidRequest(`outcome must be one of ${OUTCOME_FILTERS.join(', ')}`, 'outcome', 'invalid_parameter');
  const page = await listRecords(
    store.db,
    {
      accountId: scoped(s, qs(ctx, 'account_id', 64)),
      keyHash: qs(ctx, 'key_hash', 64),
      model: qs(ctx, 'model'),
      status: status as (typeof STATUSES)[number] | undefined,
      outcome: outcome as Outcome | 'error' | undefined,
      from: timeParam(ctx, 'from'),
      to: timeParam(ctx, 'to'),
    },
    limitParam(ctx, 50, 200),
    qs(ctx, 'cursor', 500),
  );
  return { data: page.rows.map(recordJson), next_cursor: page.next };
}

function recordJson(r: Record<string, unknown>) {
  return {
    id: r.id,
    created_at: new Date(num(r.created_at)).toISOString(),
    account_id: r.account_id,
    api_key_hash: r.key_hash,
    model: r.model,
    provider: r.provider,
    deployment: r.deployment,
    tokens_prompt: num(r.prompt_tokens),
    tokens_completion: num(r.completion_tokens),
    total_cost: fromNano(num(r.cost)),
    latency_ms: numOrNull(r.latency_ms),
    time_to_first_token_ms: numOrNull(r.ttft_ms),
    status: r.status,
    error_code: r.error_code,
    outcome: r.outcome,
    http_status: numOrNull(r.http_status),
    streamed: num(r.streamed) === 1,
    app: r.app_title ?? r.app_referer ?? null,
  };
}

/**
 * The models the session may use (an account's: those its key's and its account's allowlists permit, the limits
 * plugin's `limits.allowlist`), each with today's counts. Only the operator and admin roles see the deployments behind
 * a model: their upstream names, health and in-flight counts (fallback's health, when it is in the chain).
 */
async function modelsPage({ usage, models, shared }: ServiceContext, s: ConsoleSession) {
  const health = shared.get(HEALTH);
  const operator = hasRole(s, 'operator');
  // An account session opened with a key: that key's allowlist too; by single sign-on: its account's alone.
  const allowlist = shared.get('limits.allowlist');
  const allowed =
    s.isAdmin || !allowlist ? () => true : await allowlist(s.openedWith === 'key' ? s.subject : '', s.accountId);
  const today = dayOf(Date.now());
  const rows = await usage.query({
    fromDay: today,
    toDay: today,
    accountId: s.isAdmin ? undefined : s.accountId,
    groupBy: ['model', 'deployment'],
    limit: 5000,
  });
  const byDeployment = new Map(rows.map((r) => [`${r.model}\u0000${r.deployment}`, r]));
  const counts = (list: Array<(typeof rows)[number] | undefined>) => {
    const requests = list.reduce((n, u) => n + (u?.requests ?? 0), 0);
    const latency = list.reduce((n, u) => n + (u?.latencyMsSum ?? 0), 0);
    return {
      requests,
      errors: list.reduce((n, u) => n + (u?.errors ?? 0), 0),
      mean_latency_ms: requests ? Math.round(latency / requests) : null,
    };
  };
  return {
    data: models
      .all()
      .filter((m) => allowed(m.id))
      .map((m) => {
        const used = m.deployments.map((d) => byDeployment.get(`${m.id}\u0000${deploymentKey(d)}`));
        return {
          id: m.id,
          context_length: m.context_length,
          pricing: m.pricing,
          today: counts(used),
          deployments: !operator
            ? []
            : m.deployments.map((d, i) => {
                const key = deploymentKey(d);
                return {
                  deployment: key,
                  provider: d.provider,
                  weight: d.weight,
                  state: health ? health.state(key) : 'unknown',
                  in_flight: health ? health.inFlight(key) : null,
                  latency_ms: health && health.latency(key) > 0 ? Math.round(health.latency(key) * 10) / 10 : null,
                  today: counts([used[i]]),
                };
              }),
        };
      }),
  };
}

interface AppRanking {
  app: string | null;
  requests: number;
  tokens: number;
  usage: number;
  models: Array<{ model: string | null; requests: number; tokens: number }>;
}

/** Apps by tokens over the last `days` days, each with its models. */
async function rankingsPage({ usage }: ServiceContext, s: Scope, ctx: Ctx) {
  const days = Number(qs(ctx, 'days', 3) ?? 7);
  if (!Number.isInteger(days) || days < 1 || days > 366)
    throw errors.invalidRequest('days must be an integer from 1 to 366', 'days', 'invalid_parameter');
  const today = dayOf(Date.now());
  const rows = await usage.query({
    fromDay: today - days + 1,
    toDay: today,
    accountId: s.isAdmin ? undefined : s.accountId,
    groupBy: ['app', 'model'],
    limit: limitParam(ctx, 1000, 5000),
  });
  const apps = new Map<string, AppRanking>();
  for (const r of rows) {
    const a = apps.get(r.app ?? '') ?? { app: r.app || null, requests: 0, tokens: 0, usage: 0, models: [] };
    const tokens = r.promptTokens + r.completionTokens;
    a.requests += r.requests;
    a.tokens += tokens;
    a.usage += fromNano(r.cost);
    a.models.push({ model: r.model, requests: r.requests, tokens });
    apps.set(r.app ?? '', a);
  }
  return { days, data: [...apps.values()].sort((x, y) => y.tokens - x.tokens || y.requests - x.requests) };
}
