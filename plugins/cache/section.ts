/**
 * @module
 * The cache's settings as an admin section (the `admin.sections` slot, decision 0048): whether a key or an account
 * uses the cache, and the purge as an action; the console serves them with its session, roles, CSRF and audit, the
 * admin API (routes.ts) calls the same functions.
 */
import { bodyChecker, errors, type AdminSection, type SettingsField } from '../../src/plugin';
import type { CacheBackend } from './backends/types';
import { settingBody } from './bodies';
import { bodies } from './generated/bodies';
import { purgeFilter, purgesSomething, type PurgeBody } from './purge';
import type { CacheSettings, SettingSubject } from './store/settings';

const checkPurge = bodyChecker<PurgeBody>(bodies.purge);
const checkSetting = bodyChecker<{ enabled: boolean | null }>(bodies.setting);

/** Check a purge's body (400 naming the field; a body that names nothing and not `all` is refused), then purge. */
export async function purge(backend: CacheBackend, body: unknown): Promise<{ body: PurgeBody; deleted: number }> {
  const b = checkPurge(body);
  if (!purgesSomething(b)) throw errors.invalidRequest('Name what to purge, or all: true', 'all', 'invalid_field');
  return { body: b, deleted: await backend.purge(purgeFilter(b, Date.now())) };
}

/** Check a setting's body, then set it (null: the configured default). */
export async function setCacheSetting(settings: CacheSettings, subject: SettingSubject, id: string, body: unknown) {
  const { enabled } = checkSetting(body);
  await settings.set(subject, id, enabled);
  return { enabled };
}

const SETTING: readonly SettingsField[] = [
  {
    path: 'enabled',
    label: 'Uses the cache',
    type: 'choice',
    choices: [true, false],
    help: 'true: opt in; false: opt out; empty: the configured default (keys: in | out)',
  },
];

const PURGE_FIELDS: readonly SettingsField[] = [
  { path: 'model', label: 'Model', type: 'text', help: 'Entries of this model id' },
  { path: 'key_hash', label: 'Key hash', type: 'text', help: 'Entries stored for this key (its full hash)' },
  { path: 'account_id', label: 'Account', type: 'text', help: 'Entries stored for this account' },
  { path: 'entry', label: 'Entry', type: 'text', help: 'One entry, by its digest (a record shows it)' },
  { path: 'older_than_seconds', label: 'Older than (seconds)', type: 'integer', min: 0 },
  { path: 'all', label: 'Every entry', type: 'boolean', help: 'Alone: empties the cache' },
];

export function cacheSection(backend: CacheBackend, settings: CacheSettings): AdminSection {
  const read = async (subject: string, id: string) => ({ enabled: settings.get(subject as SettingSubject, id) });
  return {
    name: 'cache',
    title: 'Response cache',
    description: 'Whether a key or an account uses the response cache; purge entries.',
    subjects: ['key', 'account'],
    fields: SETTING,
    schema: settingBody,
    read,
    write: async (subject, id, body) => setCacheSetting(settings, subject as SettingSubject, id, body),
    async summarize(subject, ids) {
      const out = new Map<string, string>();
      for (const id of ids) {
        const on = settings.get(subject, id);
        if (on !== null) out.set(id, on ? 'cache on' : 'cache off');
      }
      return out;
    },
    actions: {
      purge: {
        title: 'Purge the cache',
        description: 'Deletes the entries matching every field given; "Every entry" alone empties the cache.',
        fields: PURGE_FIELDS,
        run: async (body) => ({ deleted: (await purge(backend, body)).deleted }),
      },
    },
  };
}
