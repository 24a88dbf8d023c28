import type { Db } from '../../../src/plugin';

/** Limits on one dimension set; absent = inherit (plan, then config defaults), 0 = no limit. */
export interface RateLimitValues {
  rpm?: number;
  tpm?: number;
  concurrency?: number;
}

/** A key's or an account's own rate limits: its values, per-model ones (globs), an account's plan. */
export interface RateLimitSettings extends RateLimitValues {
  models?: Record<string, RateLimitValues>;
  plan?: string;
}

/**
 * A key's or an account's own budget notice thresholds, in place of the configured ones (`alerts`): a key's percent
 * of its credit limit; an account's percent for its keys that have none of their own, and its balance thresholds.
 */
export interface BudgetAlertSettings {
  key_limit_percent?: number[];
  account_balance_below?: number[];
}

/** A key's or account's governance: null fields inherit / allow everything. */
export interface LimitSettings {
  allowedModels: string[] | null;
  rateLimits: RateLimitSettings | null;
  budgetAlerts: BudgetAlertSettings | null;
}

export type LimitSubject = 'key' | 'account';

const TABLE: Record<LimitSubject, { table: string; id: string }> = {
  key: { table: 'api_keys', id: 'hash' },
  account: { table: 'accounts', id: 'id' },
};

function parse<T>(text: unknown): T | null {
  if (typeof text !== 'string' || text === '') return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

/** Model allowlists and rate limits of keys and accounts (columns of the limits migration). */
export class LimitSettingsRepo {
  /** Told of every change made in this process (caches forget the entry at once; other replicas wait out their TTL). */
  static readonly listeners = new Set<(subject: LimitSubject, id: string) => void>();

  constructor(private readonly db: Db) {}

  /** undefined when the key or account does not exist. */
  async get(subject: LimitSubject, id: string): Promise<LimitSettings | undefined> {
    const t = TABLE[subject];
    const r = await this.db.get<{ allowed_models: unknown; rate_limits: unknown; budget_alerts: unknown }>(
      `SELECT allowed_models, rate_limits, budget_alerts FROM ${t.table} WHERE ${t.id} = ?`,
      [id],
    );
    return r
      ? {
          allowedModels: parse<string[]>(r.allowed_models),
          rateLimits: parse<RateLimitSettings>(r.rate_limits),
          budgetAlerts: parse<BudgetAlertSettings>(r.budget_alerts),
        }
      : undefined;
  }

  /** The settings of several keys or accounts at once (a list page's), by id; ids that do not exist are left out. */
  async getMany(subject: LimitSubject, ids: readonly string[]): Promise<Map<string, LimitSettings>> {
    const t = TABLE[subject];
    const out = new Map<string, LimitSettings>();
    if (ids.length === 0) return out;
    const rows = await this.db.all<{
      id: string;
      allowed_models: unknown;
      rate_limits: unknown;
      budget_alerts: unknown;
    }>(
      `SELECT ${t.id} AS id, allowed_models, rate_limits, budget_alerts FROM ${t.table} ` +
        `WHERE ${t.id} IN (${ids.map(() => '?').join(', ')})`,
      [...ids],
    );
    for (const r of rows)
      out.set(r.id, {
        allowedModels: parse<string[]>(r.allowed_models),
        rateLimits: parse<RateLimitSettings>(r.rate_limits),
        budgetAlerts: parse<BudgetAlertSettings>(r.budget_alerts),
      });
    return out;
  }

  /** Set the fields given (null clears one), in one statement; false when the key or account does not exist. */
  async set(subject: LimitSubject, id: string, patch: Partial<LimitSettings>): Promise<boolean> {
    const t = TABLE[subject];
    const sets: string[] = [];
    const params: Array<string | number | null> = [];
    if (patch.allowedModels !== undefined) {
      sets.push('allowed_models = ?');
      params.push(patch.allowedModels === null ? null : JSON.stringify(patch.allowedModels));
    }
    if (patch.rateLimits !== undefined) {
      sets.push('rate_limits = ?');
      params.push(patch.rateLimits === null ? null : JSON.stringify(patch.rateLimits));
    }
    if (patch.budgetAlerts !== undefined) {
      sets.push('budget_alerts = ?');
      params.push(patch.budgetAlerts === null ? null : JSON.stringify(patch.budgetAlerts));
    }
    sets.push('updated_at = ?');
    params.push(Date.now(), id);
    const changed =
      (await this.db.run(`UPDATE ${t.table} SET ${sets.join(', ')} WHERE ${t.id} = ?`, params)).changes === 1;
    for (const l of LimitSettingsRepo.listeners) l(subject, id);
    return changed;
  }

  /** Record a budget notice; true only for the first caller (any replica) per subject, threshold and window. */
  async claimNotice(subject: string, threshold: string, windowId: string): Promise<boolean> {
    const r = await this.db.run(
      'INSERT INTO limit_notices (subject, threshold, window_id, sent_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [subject, threshold, windowId, Date.now()],
    );
    return r.changes === 1;
  }
}
