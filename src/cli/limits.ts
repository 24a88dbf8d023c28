import { limitSettingsJson } from '../../plugins/limits/admin-api';
import { LimitSettingsRepo, type LimitSubject, type RateLimitSettings } from '../store/limit-settings';
import { fail, print, withStore } from './store-cli';

const COUNTS = ['rpm', 'tpm', 'concurrency'] as const;

/**
 * `keys limits HASH` / `accounts limits ID`: show, or with flags set, a key's or an
 * account's model allowlist and rate limits. --models takes a comma list of ids and globs,
 * `all` (no allowlist) or `none`; --rpm/--tpm/--concurrency a number (0 = no limit) or
 * `inherit`; --plan a plan name (accounts) or `inherit`.
 */
export function runLimits(subject: LimitSubject, args: string[]): Promise<number> {
  return withStore(
    args,
    {
      models: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      concurrency: { type: 'string' },
      plan: { type: 'string' },
    },
    async (store, v, [id]) => {
      if (!id)
        return fail(`${subject === 'key' ? 'keys limits needs the key hash' : 'accounts limits needs the account id'}`);
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
