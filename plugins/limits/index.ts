import {
  addReadinessCheck,
  ADMIN_GUARD,
  AUTH_THROTTLE,
  Counter,
  defaultPlan,
  definePlugin,
  errors,
  Gauge,
  getAuthenticate,
  HEALTH,
  MAIL_SMTP,
  MODELS_FILTER,
  randomId,
  type Attempt,
  type AttemptPlan,
  type AttemptVerdict,
  type GatewayContext,
  type GatewayState,
  type ModelsFilter,
} from '../../src/plugin';
import { LimitSettingsRepo } from './store/repo';
import { limitsMigrations } from './store/migrations';
import { registerLimitRoutes } from './admin-api';
import { limitsCommands } from './cli';
import type { Admission, CounterStore, ScopeLimits } from './counter-store';
import { configSchema, type LimitsConfig } from './config';
import { MemoryCounterStore } from './memory-store';
import { CounterStoreDown, RedisCounterStore } from './redis-store';
import { Governance, isModelScope, type RequestGovernance } from './scopes';
import { isAllowAll } from './model-match';
import { attemptTokenBound, planTokenBound } from './token-bound';
import { rateLimitHeaders } from './headers';
import { BudgetAlerts } from './alerts';
import { FailedAuthThrottle } from './auth-throttle';

const SCOPE_KIND: Record<string, string> = { k: 'key', a: 'account', m: 'model', km: 'key_model' };
const SCOPE_TEXT: Record<string, string> = {
  k: 'this key',
  a: "this key's account",
  m: 'this model',
  km: 'this key on this model',
};

const kindOf = (s: ScopeLimits) => s.id.slice(0, s.id.indexOf(':'));

function refusal(a: Extract<Admission, { ok: false }>, scope: ScopeLimits, tokens: number) {
  const retryS = Math.max(1, Math.ceil(a.retryAfterMs / 1000));
  const who = SCOPE_TEXT[kindOf(scope)];
  if (a.dimension === 'concurrency') {
    return errors.rateLimited(
      'concurrency_limit_exceeded',
      `Too many concurrent requests for ${who} (limit ${scope.concurrency}); retry when one ends`,
      retryS,
    );
  }
  if (a.dimension === 'requests')
    return errors.rateLimited(
      'rate_limit_exceeded',
      `Rate limit for ${who}: ${scope.rpm} requests per minute; retry in ${retryS} s`,
      retryS,
    );
  if (tokens > scope.tpm) {
    return errors.rateLimited(
      'rate_limit_exceeded',
      `This request may use ${tokens} tokens, ` +
        `more than the ${scope.tpm} tokens per minute allowed for ${who}; lower max_tokens`,
      retryS,
    );
  }
  return errors.rateLimited(
    'rate_limit_exceeded',
    `Rate limit for ${who}: ${scope.tpm} tokens per minute; retry in ${retryS} s`,
    retryS,
  );
}

/**
 * Key governance: model allowlists per key and account, rate limits (requests/min,
 * tokens/min, concurrent requests) per key, account, model and key x model, counted in
 * this process or in Redis for every replica, budget notices and failed-auth throttling.
 */
export default definePlugin<LimitsConfig>({
  name: 'limits',
  description: 'Rate limits, concurrency limits and model allowlists per key/account/model; budget alerts.',
  requires: ['principal'],
  provides: ['limits'],
  // Limits count what the plan will call: fallback writes it first when it is in the chain.
  after: ['fallback'],
  configSchema,
  cli: { commands: limitsCommands },
  store: { migrations: limitsMigrations },
  async setup(config, services) {
    const { logger } = services;
    const repo = new LimitSettingsRepo(services.store.db);
    const governance = new Governance(repo, config);
    const leaseMs = services.config.server.max_request_timeout_s * 1000 + 60_000;
    const registers = [services.metrics];
    const storeUp = new Gauge({
      name: 'gateway_limits_store_up',
      help: 'Whether the limits counter store answers (1) or the fail mode applies (0)',
      registers,
    });
    const refusals = new Counter({
      name: 'gateway_limits_refusals_total',
      help: 'Requests refused by a limit, by scope kind and dimension',
      labelNames: ['scope', 'dimension'],
      registers,
    });
    const failModeUsed = new Counter({
      name: 'gateway_limits_fail_mode_total',
      help: 'Requests decided by the fail mode while the counter store was unreachable',
      labelNames: ['mode'],
      registers,
    });

    let counters: CounterStore;
    let redis: RedisCounterStore | undefined;
    if (config.store === 'redis') {
      redis = new RedisCounterStore(
        {
          url: config.redis.url,
          prefix: config.redis.prefix,
          windowMs: config.window_ms,
          leaseMs,
          timeoutMs: config.redis.timeout_ms,
        },
        logger,
      );
      redis.onChange = (up) => storeUp.set(up ? 1 : 0);
      storeUp.set(0);
      await redis.connect(2000);
      counters = redis;
    } else {
      storeUp.set(1);
      counters = new MemoryCounterStore(config.window_ms, leaseMs);
    }
    addReadinessCheck(services.shared, () =>
      !redis || redis.up
        ? { name: 'limits', status: 'ok', detail: `${counters.kind} counters` }
        : { name: 'limits', status: 'degraded', detail: `redis unreachable: failing ${config.fail_mode}` },
    );

    const throttle =
      config.auth_failures.max > 0
        ? new FailedAuthThrottle(config.auth_failures.max, config.auth_failures.window_ms)
        : undefined;
    if (throttle) services.shared.set(AUTH_THROTTLE, throttle);
    if (throttle && redis) {
      const shared = redis;
      const max = config.auth_failures.max;
      const windowMs = config.auth_failures.window_ms;
      throttle.shared = async (address) => {
        const a = await shared.admit({
          id: randomId('fail_'),
          tokens: 0,
          windowMs,
          scopes: [{ id: `f:${address}`, rpm: max, tpm: 0, concurrency: 0 }],
        });
        return a.ok ? undefined : a.retryAfterMs;
      };
    }

    const filter: ModelsFilter = async (ctx) => {
      const authenticate = getAuthenticate(services.shared);
      if (!authenticate || !ctx.get('authorization')) return () => true;
      const p = await authenticate(ctx).catch(() => undefined);
      return !p || p.isAdmin ? () => true : governance.allowlist(p.keyHash, p.accountId);
    };
    services.shared.set(MODELS_FILTER, filter);

    // Budget e-mail goes through limits' own SMTP settings, else those another plugin offers (oauth's leak notices),
    // asked when the first notice is sent: that plugin may come later in the chain.
    const alerts = new BudgetAlerts(
      services.store,
      repo,
      config.alerts,
      () => config.alerts.smtp ?? services.shared.get(MAIL_SMTP),
      logger,
    );

    // The admin routes of the settings (GET/PUT /v1/keys/{hash}/limits, /v1/accounts/{id}/limits), behind the admin
    // API's check when a plugin offers one (auth, which comes before this plugin: it provides the principal).
    const admin = services.shared.get(ADMIN_GUARD);
    if (admin) registerLimitRoutes(services.router, services.store, admin);

    // Fail-open with Redis away: this replica's own counters, so each replica still holds the limits by itself.
    const local = redis && config.fail_mode === 'open' ? new MemoryCounterStore(config.window_ms, leaseMs) : undefined;

    async function admit(
      id: string,
      tokens: number,
      scopes: ScopeLimits[],
    ): Promise<{ admission: Admission; by: CounterStore }> {
      try {
        return { admission: await counters.admit({ id, tokens, scopes }), by: counters };
      } catch (e) {
        if (!(e instanceof CounterStoreDown)) throw e;
        failModeUsed.inc({ mode: config.fail_mode });
        if (!local)
          throw errors.rateLimited('limits_unavailable', 'Rate limits cannot be checked right now; retry shortly', 2);
        return { admission: local.admitSync({ id, tokens, scopes }), by: local };
      }
    }

    /** Admit with the counters of this process, else the store's (the fail mode when it is away). */
    const admitNow = (id: string, tokens: number, scopes: ScopeLimits[]) =>
      counters.admitSync
        ? { admission: counters.admitSync({ id, tokens, scopes }), by: counters }
        : admit(id, tokens, scopes);

    const refused = (admission: Extract<Admission, { ok: false }>, scopes: ScopeLimits[], tokens: number) => {
      const scope = scopes[admission.scope];
      refusals.inc({ scope: SCOPE_KIND[kindOf(scope)], dimension: admission.dimension });
      return refusal(admission, scope, tokens);
    };

    /** Per request that counted its first attempt's model scopes at admission: that attempt, not yet made. */
    const preAdmitted = new WeakMap<GatewayState, Attempt>();

    // Every upstream attempt: the allowlists for its model, and its model's and key x model's limits (each upstream
    // call counts, with the tokens of the attempt's own request).
    services.attemptGuards.register({
      name: 'limits',
      check(s, a) {
        const p = s.principal;
        if (!p) return undefined;
        const gov = governance.cachedFor(p.keyHash, p.accountId, a.model.id);
        return gov
          ? guardAttempt(s, a, gov)
          : governance.forRequest(p.keyHash, p.accountId, a.model.id).then((g) => guardAttempt(s, a, g));
      },
    });

    function guardAttempt(
      s: GatewayState,
      a: Attempt,
      gov: RequestGovernance,
    ): AttemptVerdict | Promise<AttemptVerdict> {
      if (!gov.allow(a.model.id)) return { refuse: errors.modelNotAllowed(a.model.id) };
      const scopes = gov.modelScopes;
      if (scopes.length === 0) return undefined;
      if (preAdmitted.get(s) === a) {
        preAdmitted.delete(s); // counted with the request; its retries count anew
        return undefined;
      }
      const id = randomId('lim_');
      const tokens = scopes.some((sc) => sc.tpm > 0) ? attemptTokenBound(s, a) : 0;
      const verdict = ({ admission, by }: { admission: Admission; by: CounterStore }): AttemptVerdict => {
        if (!admission.ok) return { refuse: refused(admission, scopes, tokens) };
        return { end: (use) => void by.finish(id, scopes, use.tokens ?? tokens) };
      };
      const r = admitNow(id, tokens, scopes);
      return r instanceof Promise ? r.then(verdict) : verdict(r);
    }

    /**
     * Leave out of the plan the attempts on models the key may not use (no credit is reserved for them), each kept in
     * the attempt log as skipped by this guard.
     */
    function prune(s: GatewayState, plan: AttemptPlan, allow: (model: string) => boolean): void {
      const keep = (list: Attempt[]) =>
        list.filter((a) => {
          if (allow(a.model.id)) return true;
          const e = errors.modelNotAllowed(a.model.id);
          s.attempts.push({
            provider: a.provider.name,
            deployment: `${a.provider.name}/${a.deployment.model}`,
            model: a.model.id,
            status: 'skipped',
            guard: 'limits',
            error: { code: e.code, status: e.status },
            latencyMs: 0,
          });
          return false;
        });
      plan.attempts = keep(plan.attempts);
      if (plan.contextFallback) plan.contextFallback = keep(plan.contextFallback);
    }

    return {
      async middleware(ctx: GatewayContext, next) {
        const s = ctx.state.gateway;
        const p = s.principal;
        if (!p) throw errors.internal();
        // Cached (the usual case): no promise to wait for.
        const asked =
          governance.cachedFor(p.keyHash, p.accountId, s.model.id) ??
          (await governance.forRequest(p.keyHash, p.accountId, s.model.id));
        if (!asked.allow(s.model.id)) throw errors.modelNotAllowed(s.model.id);
        // The plan fallback wrote, or the one routing would make (credit then reserves for this same one).
        const plan = s.plan ?? (s.plan = defaultPlan(s, s.model, services.models, services.shared.get(HEALTH)));
        if (!isAllowAll(asked.allow)) prune(s, plan, asked.allow);
        // The first attempt's model scopes are counted with the request (one admission for a direct call).
        const first = plan.attempts[0]?.model ?? s.model;
        const gov =
          first === s.model
            ? asked
            : (governance.cachedFor(p.keyHash, p.accountId, first.id) ??
              (await governance.forRequest(p.keyHash, p.accountId, first.id)));
        let scopes = gov.scopes;
        if (scopes.length === 0) {
          try {
            await next();
          } finally {
            alerts.poke(p.keyHash);
          }
          return;
        }
        const id = randomId('lim_');
        // The plan's token bound (credit's, a walk over each attempt's request) only matters to a tokens/min limit.
        const tokens = scopes.some((sc) => sc.tpm > 0) ? planTokenBound(s, plan) : 0;
        let { admission, by } = await admitNow(id, tokens, scopes);
        if (!admission.ok && isModelScope(scopes[admission.scope]) && plan.attempts.some((a) => a.model !== first)) {
          // The first model is at its limit but the plan has others: count the request alone; the guard skips the
          // attempts on that model.
          scopes = scopes.filter((sc) => !isModelScope(sc));
          ({ admission, by } = await admitNow(id, tokens, scopes));
        } else if (admission.ok && gov.modelScopes.length > 0 && plan.attempts[0]) {
          preAdmitted.set(s, plan.attempts[0]);
        }
        if (!admission.ok) {
          ctx.set(rateLimitHeaders(scopes, admission.usage));
          throw refused(admission, scopes, tokens);
        }
        Object.assign(s.responseHeaders, rateLimitHeaders(scopes, admission.usage));
        let done = false;
        const held = scopes;
        const finish = (used: number) => {
          if (done) return;
          done = true;
          void by.finish(id, held, used);
          alerts.poke(p.keyHash);
        };
        try {
          await next();
        } catch (e) {
          finish(0);
          throw e;
        }
        const result = s.result;
        if (result?.kind === 'completion') finish(result.body.usage?.total_tokens ?? tokens);
        else if (result?.kind === 'embeddings') finish(result.body.usage?.total_tokens ?? tokens);
        else if (result?.kind === 'stream')
          result.stream.observe({ name: 'limits', onEnd: (end) => finish(end.usage?.total_tokens ?? 0) });
        else finish(0);
      },
      async close() {
        throttle?.close();
        governance.close();
        await alerts.close();
        await counters.close();
        await local?.close();
      },
    };
  },
});
