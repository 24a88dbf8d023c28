import { auditCli, fail, findAccount, findKey, print, withStore, type CliCommand } from '../../src/plugin';
import { LimitSettingsRepo, type BudgetAlertSettings, type LimitSubject, type RateLimitSettings } from './store/repo';
import { limitSettingsJson, limitsSection } from './section';

const COUNTS = ['rpm', 'tpm', 'concurrency'] as const;

type Flags = Record<string, string | boolean | undefined>;

/**
 * The rate limits after --rpm/--tpm/--concurrency/--plan (a number, or `inherit` to clear one); undefined: none given.
 */
function ratesFrom(v: Flags, current: RateLimitSettings | null): RateLimitSettings | null | undefined | string {
  const rates: RateLimitSettings = { ...(current ?? {}) };
  let changed = false;
  for (const c of COUNTS) {
    const raw = v[c];
    if (typeof raw !== 'string') continue;
    changed = true;
    if (raw === 'inherit') delete rates[c];
    else {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 0) return `--${c} must be an integer >= 0 or "inherit"`;
      rates[c] = n;
    }
  }
  if (typeof v.plan === 'string') {
    changed = true;
    if (v.plan === 'inherit') delete rates.plan;
    else rates.plan = v.plan;
  }
  if (!changed) return undefined;
  return Object.keys(rates).length ? rates : null;
}

/** --models: a comma list, `all` (no allowlist) or `none`; undefined when not given. */
function modelsFrom(v: Flags): string[] | null | undefined {
  if (typeof v.models !== 'string') return undefined;
  if (v.models === 'all') return null;
  if (v.models === 'none') return [];
  return v.models
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
}

/**
 * The budget notice thresholds after --alert-percent (a key's or an account's percent of the credit limit) and
 * --alert-balance (an account's balances): a comma list of numbers, `none` (no notice), or `inherit` (the
 * configured ones); undefined when neither is given, a string when one is wrong.
 */
function alertsFrom(v: Flags, current: BudgetAlertSettings | null): BudgetAlertSettings | null | undefined | string {
  const next: BudgetAlertSettings = { ...(current ?? {}) };
  let changed = false;
  for (const [flag, field] of [
    ['alert-percent', 'key_limit_percent'],
    ['alert-balance', 'account_balance_below'],
  ] as const) {
    const raw = v[flag];
    if (typeof raw !== 'string') continue;
    changed = true;
    if (raw === 'inherit') delete next[field];
    else {
      const ns = raw === 'none' ? [] : raw.split(',').map((x) => Number(x.trim()));
      if (ns.some((n) => !Number.isFinite(n) || n < 0)) return `--${flag} takes numbers, "none" or "inherit"`;
      next[field] = ns;
    }
  }
  if (!changed) return undefined;
  return Object.keys(next).length ? next : null;
}

/**
 * `keys limits KEY` / `accounts limits ACCOUNT`: show, or with flags set, a key's or an account's model allowlist,
 * rate limits and budget notice thresholds; written through the plugin's admin section, so the CLI checks what the
 * admin API and the console check.
 */
function runLimits(subject: LimitSubject, args: string[]): Promise<number> {
  return withStore(args, FLAGS, async (store, v, [ref]) => {
    if (!ref)
      return fail(
        subject === 'key'
          ? 'keys limits needs the key: its hash (or its first 6+ characters), name or label'
          : 'accounts limits needs the account: its id or name',
      );
    // By name, hash start or label too, as every key and account command takes them.
    const found = subject === 'key' ? await findKey(store, ref) : await findAccount(store, ref);
    if (typeof found === 'string') return fail(found);
    const id = 'hash' in found ? found.hash : found.id;
    const repo = new LimitSettingsRepo(store.db);
    const current = await repo.get(subject, id);
    if (!current) return fail(`no ${subject} '${id.slice(0, 64)}'`);
    const rates = ratesFrom(v, current.rateLimits);
    const alerts = alertsFrom(v, current.budgetAlerts);
    for (const problem of [rates, alerts]) if (typeof problem === 'string') return fail(problem);
    const body = {
      ...(modelsFrom(v) !== undefined ? { allowed_models: modelsFrom(v) } : {}),
      ...(rates !== undefined ? { rate_limits: rates } : {}),
      ...(alerts !== undefined ? { budget_alerts: alerts } : {}),
    };
    if (Object.keys(body).length) {
      let after: unknown;
      try {
        after = await limitsSection(repo).write(subject, id, body, { principal: CLI_PRINCIPAL });
      } catch (e) {
        return fail((e as Error).message);
      }
      // As the admin API and the console audit it: `limits.set` on `key:<hash>` / `account:<id>`, before and after.
      await auditCli(store, {
        action: 'limits.set',
        target: `${subject}:${id}`,
        before: limitSettingsJson(current),
        after,
      });
    }
    print([limitSettingsJson((await repo.get(subject, id))!)], v.json === true);
    return 0;
  });
}

const FLAGS = {
  models: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  concurrency: { type: 'string' },
  plan: { type: 'string' },
  'alert-percent': { type: 'string' },
  'alert-balance': { type: 'string' },
} as const;

/** Who writes from the CLI: the operator at the machine, with the store in hand (the section's caller). */
const CLI_PRINCIPAL = { keyHash: '', keyLabel: 'cli', accountId: '*', isAdmin: true, role: 'admin' } as const;

/**
 * The plugin's CLI: `gateway keys limits KEY ...` and `gateway accounts limits ACCOUNT ...` (the definition's
 * `cli`).
 */
export const limitsCommands: CliCommand[] = [
  {
    parent: 'keys',
    name: 'limits',
    usage: 'keys limits KEY',
    summary: "show or set a key's allowlist, rate limits and budget notices",
    help: [
      'keys limits KEY [--models ids,globs|all|none] [--rpm N] [--tpm N] [--concurrency N]',
      '                [--alert-percent 50,90|none|inherit]',
      "                                  show or set the key's allowlist, rate limits, budget notices",
    ],
    run: (args) => runLimits('key', args),
  },
  {
    parent: 'accounts',
    name: 'limits',
    usage: 'accounts limits ACCOUNT',
    summary: "show or set an account's allowlist, rate limits, plan and budget notices",
    help: [
      'accounts limits ACCOUNT [--models ids,globs|all|none] [--rpm N] [--tpm N] [--concurrency N]',
      '                        [--plan P] [--alert-percent 50,90|none|inherit]',
      '                        [--alert-balance 5,1|none|inherit]',
      "                                  show or set the account's allowlist, limits, plan, notices",
    ],
    run: (args) => runLimits('account', args),
  },
];
