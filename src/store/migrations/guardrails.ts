import type { Migration } from './index';

/**
 * What guardrails did to a request, in its generation record (JSON text: rule, side, action, count; never a matched
 * value). A core migration, not the guardrails plugin's: the record's insert names every column, with the plugin in
 * the chain or not.
 */
export const guardrailsMigrations: Migration[] = [
  {
    module: 'guardrails',
    version: 1,
    description: 'generations.guardrails: the actions guardrails took on the request',
    up: `ALTER TABLE generations ADD COLUMN guardrails TEXT;`,
  },
];
