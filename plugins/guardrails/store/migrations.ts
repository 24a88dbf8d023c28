import type { Migration } from '../../../src/plugin';

/**
 * Which policy a key or an account has, set through the admin API (the policies themselves are in YAML). Module
 * `guardrails_policies`: `guardrails` is the core's (the generation record's column).
 */
export const guardrailsMigrations: Migration[] = [
  {
    module: 'guardrails_policies',
    version: 1,
    description: 'guardrail policy per key and per account',
    up: `
      CREATE TABLE guardrail_assignments (
        subject TEXT NOT NULL,
        subject_id TEXT NOT NULL,
        policy TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (subject, subject_id)
      );
    `,
  },
];
