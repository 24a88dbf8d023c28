/**
 * @module
 * The limits plugin's settings as an admin section (the `admin.sections` slot, decision 0048): a key's or an account's
 * model allowlist, rate limits and budget notice thresholds, read and written by the same functions for the admin
 * API (routes.ts: /v1/keys/{hash}/limits, /v1/accounts/{id}/limits) and the console (/console/api/settings/limits/...).
 */
import { bodyChecker, errors, type AdminSection, type SectionSubject, type SettingsField } from '../../src/plugin';
import { bodies } from './generated/bodies';
import { limitSettingsSchema } from './bodies';
import type { BudgetAlertSettings, LimitSettings, LimitSettingsRepo, RateLimitSettings } from './store/repo';

/**
 * The body of PUT .../limits: fields given replace, null clears (inherit / every model / the configured thresholds).
 */
export interface LimitSettingsBody {
  allowed_models?: string[] | null;
  rate_limits?: RateLimitSettings | null;
  budget_alerts?: BudgetAlertSettings | null;
}

const checkSettings = bodyChecker<LimitSettingsBody>(bodies.limitSettings);

export function limitSettingsJson(s: LimitSettings) {
  return { allowed_models: s.allowedModels, rate_limits: s.rateLimits, budget_alerts: s.budgetAlerts };
}

const FIELDS: readonly SettingsField[] = [
  {
    path: 'allowed_models',
    label: 'Allowed models',
    type: 'list',
    placeholder: 'every model',
    empty: 'no model',
    help: 'Not set (null): every model; only these: ids or globs (anthropic/*); no model: an empty list ([])',
  },
  {
    path: 'rate_limits.rpm',
    label: 'Requests per minute',
    type: 'integer',
    min: 0,
    placeholder: 'inherit',
    help: 'Empty: inherit; 0: none',
  },
  {
    path: 'rate_limits.tpm',
    label: 'Tokens per minute',
    type: 'integer',
    min: 0,
    placeholder: 'inherit',
    help: 'Empty: inherit; 0: none',
  },
  {
    path: 'rate_limits.concurrency',
    label: 'Concurrent requests',
    type: 'integer',
    min: 0,
    placeholder: 'inherit',
    help: 'Empty: inherit',
  },
  {
    path: 'rate_limits.models',
    label: 'Per-model limits',
    type: 'json',
    placeholder: 'none of its own',
    help: 'JSON, e.g. {"anthropic/*": {"rpm": 10}}; empty: none of its own',
  },
  {
    path: 'rate_limits.plan',
    label: 'Plan',
    type: 'text',
    subjects: ['account'],
    placeholder: 'none',
    help: 'A plan of gateway.yaml',
  },
  {
    path: 'budget_alerts.key_limit_percent',
    label: 'Notify at % of credit limit',
    type: 'numbers',
    placeholder: 'the configured thresholds',
    empty: 'no notice',
    help: 'e.g. 50, 80, 100; not set: the configured thresholds; no notice: an empty list',
  },
  {
    path: 'budget_alerts.account_balance_below',
    label: 'Notify when balance below',
    type: 'numbers',
    subjects: ['account'],
    placeholder: 'the configured thresholds',
    empty: 'no notice',
    help: 'Credits, e.g. 5, 1; not set: the configured thresholds; no notice: an empty list',
  },
];

/** Whole-body checks the schema cannot say: an account's balance thresholds are not a key's. */
function checkFor(subject: SectionSubject, body: LimitSettingsBody): void {
  if (subject === 'key' && body.budget_alerts?.account_balance_below !== undefined)
    throw errors.invalidRequest(
      'budget_alerts.account_balance_below is set on an account, not a key',
      'budget_alerts.account_balance_below',
      'invalid_field',
    );
}

/** One-line summary for list columns: what the subject sets of its own. */
function summary(s: LimitSettings): string | undefined {
  const parts: string[] = [];
  if (s.allowedModels) parts.push(`models: ${s.allowedModels.length ? s.allowedModels.join(', ') : 'none'}`);
  const r = s.rateLimits;
  if (r?.rpm !== undefined) parts.push(`${r.rpm} rpm`);
  if (r?.tpm !== undefined) parts.push(`${r.tpm} tpm`);
  if (r?.concurrency !== undefined) parts.push(`${r.concurrency} concurrent`);
  if (r?.models) parts.push(`${Object.keys(r.models).length} model limits`);
  if (r?.plan) parts.push(`plan ${r.plan}`);
  const a = s.budgetAlerts;
  if (a?.key_limit_percent) parts.push(`alerts ${a.key_limit_percent.map((p) => `${p}%`).join(' ')}`);
  if (a?.account_balance_below) parts.push(`alerts < ${a.account_balance_below.join(', ')}`);
  return parts.length ? parts.join(' · ') : undefined;
}

/** The section; `subject` existence is the caller's check (the console's, or routes.ts's existingSubject). */
export function limitsSection(repo: LimitSettingsRepo): AdminSection {
  const read = async (subject: SectionSubject, id: string) => {
    const s = await repo.get(subject as 'key' | 'account', id);
    if (!s) throw errors.notFound(`${subject as 'key' | 'account'}_not_found`, `No ${subject} with that id`);
    return limitSettingsJson(s);
  };
  return {
    name: 'limits',
    title: 'Allowlist, rate limits and budget alerts',
    description: 'Enforced by the limits plugin; changes reach every replica within settings_cache_ms.',
    subjects: ['key', 'account'],
    fields: FIELDS,
    schema: limitSettingsSchema,
    read,
    async write(subject, id, body) {
      const b = checkSettings(body);
      checkFor(subject, b);
      const done = await repo.set(subject as 'key' | 'account', id, {
        allowedModels: b.allowed_models,
        rateLimits: b.rate_limits,
        budgetAlerts: b.budget_alerts,
      });
      if (!done) throw errors.notFound(`${subject as 'key' | 'account'}_not_found`, `No ${subject} with that id`);
      return read(subject, id);
    },
    async summarize(subject, ids) {
      // One query for the page (the console's lists ask for up to 200 at once).
      const out = new Map<string, string>();
      for (const [id, s] of await repo.getMany(subject, ids)) {
        const text = summary(s);
        if (text) out.set(id, text);
      }
      return out;
    },
  };
}
