import { fail, findAccount, findKey, print, withStore, type CliCommand } from '../../src/plugin';
import { LimitSettingsRepo, type LimitSubject, type RateLimitSettings } from './store/repo';
import { limitSettingsJson } from './section';

const COUNTS = ['rpm', 'tpm', 'concurrency'] as const;

/**
 * `keys limits KEY` / `accounts limits ACCOUNT`: show, or with flags set, a key's or an
 * account's model allowlist and rate limits. --models takes a comma list of ids and globs,
 * `all` (no allowlist) or `none`; --rpm/--tpm/--concurrency a number (0 = no limit) or
 * `inherit`; --plan a plan name (accounts) or `inherit`.
 */
function runLimits(subject: LimitSubject, args: string[]): Promise<number> {
  return withStore(
    args,
    {
      models: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      concurrency: { type: 'string' },
      plan: { type: 'string' },
    },
    async (store, v, [ref]) => {
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
      const rates: RateLimitSettings = { ...(current.rateLimits ?? {}) };
      let changed = false;
      for (const c of COUNTS) {
        const raw = v[c];
        if (typeof raw !== 'string') continue;
        changed = true;
        if (raw === 'inherit') delete rates[c];
        else {
          const n = Number(raw);
          if (!Number.isInteger(n) || n < 0) return fail(`--${c} must be an integer >= 0 or "inherit"`);
          rates[c] = n;
        }
      }
      if (typeof v.plan === 'string') {
        changed = true;
        if (v.plan === 'inherit') delete rates.plan;
        else rates.plan = v.plan;
      }
      let allowed: string[] | null | undefined;
      if (typeof v.models === 'string')
        allowed =
          v.models === 'all'
            ? null
            : v.models === 'none'
              ? []
              : v.models
                  .split(',')
                  .map((m) => m.trim())
                  .filter(Boolean);
      if (changed || allowed !== undefined) {
        await repo.set(subject, id, {
          ...(allowed !== undefined ? { allowedModels: allowed } : {}),
          ...(changed ? { rateLimits: Object.keys(rates).length ? rates : null } : {}),
        });
      }
      print([limitSettingsJson((await repo.get(subject, id))!)], v.json === true);
      return 0;
    },
  );
}

/**
 * The plugin's CLI: `gateway keys limits KEY ...` and `gateway accounts limits ACCOUNT ...` (the definition's
 * `cli`).
 */
export const limitsCommands: CliCommand[] = [
  {
    parent: 'keys',
    name: 'limits',
    usage: 'keys limits KEY',
    summary: "show or set a key's allowlist and rate limits",
    help: [
      'keys limits KEY [--models ids,globs|all|none] [--rpm N] [--tpm N] [--concurrency N]',
      "                                  show or set the key's allowlist and rate limits",
    ],
    run: (args) => runLimits('key', args),
  },
  {
    parent: 'accounts',
    name: 'limits',
    usage: 'accounts limits ACCOUNT',
    summary: "show or set an account's allowlist, rate limits and plan",
    help: [
      'accounts limits ACCOUNT [--models ids,globs|all|none] [--rpm N] [--tpm N] [--concurrency N]',
      '                        [--plan P]',
      "                                  show or set the account's allowlist, rate limits and plan",
    ],
    run: (args) => runLimits('account', args),
  },
];
