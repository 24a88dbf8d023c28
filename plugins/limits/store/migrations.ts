import type { Migration } from '../../../src/plugin';

/**
 * Key governance (limits plugin): a model allowlist and rate limits per key and per
 * account (JSON text, NULL = inherit), and the budget notices already sent, so that every
 * replica sends each notice once per threshold per window.
 */
export const limitsMigrations: Migration[] = [
  {
    module: 'limits',
    version: 1,
    description: 'model allowlists, rate limits, budget notices',
    up: `
      ALTER TABLE api_keys ADD COLUMN allowed_models TEXT;
      ALTER TABLE api_keys ADD COLUMN rate_limits TEXT;
      ALTER TABLE accounts ADD COLUMN allowed_models TEXT;
      ALTER TABLE accounts ADD COLUMN rate_limits TEXT;
      CREATE TABLE limit_notices (
        subject TEXT NOT NULL,
        threshold TEXT NOT NULL,
        window_id TEXT NOT NULL,
        sent_at BIGINT NOT NULL,
        PRIMARY KEY (subject, threshold, window_id)
      );
    `,
  },
  {
    module: 'limits',
    version: 2,
    description: 'budget notice thresholds per key and per account',
    // JSON text, NULL = the configured thresholds (alerts.key_limit_percent, alerts.account_balance_below).
    up: `
      ALTER TABLE api_keys ADD COLUMN budget_alerts TEXT;
      ALTER TABLE accounts ADD COLUMN budget_alerts TEXT;
    `,
  },
];
