/**
 * @module
 * The presets as an admin section (the `admin.sections` slot, decision 0048): the console lists, reads, creates,
 * changes and deletes them through the same PresetAdmin as /v1/presets; gateway.yaml's are listed read-only (409).
 */
import type { AdminSection, SettingsField } from '../../src/plugin';
import { presetBody } from './bodies';
import type { PresetAdmin } from './presets';

const FIELDS: readonly SettingsField[] = [
  { path: 'model', label: 'Model', type: 'text', help: 'A model id (or give models)' },
  { path: 'models', label: 'Models', type: 'list', help: 'Model ids in fallback order, separated by commas' },
  {
    path: 'provider',
    label: 'Provider preferences',
    type: 'json',
    help: 'JSON, e.g. {"order": ["openai"], "allow_fallbacks": true}; empty: none',
  },
  { path: 'params', label: 'Default parameters', type: 'json', help: 'JSON, e.g. {"temperature": 0.2}' },
  { path: 'system', label: 'System prompt', type: 'text', help: 'Put first when the request has none' },
];

export function presetsSection(presets: PresetAdmin): AdminSection {
  return {
    name: 'presets',
    title: 'Presets',
    description: "Named request bundles (model: '@preset/name'); gateway.yaml's are read-only.",
    subjects: ['item'],
    fields: FIELDS,
    schema: presetBody,
    audit: 'preset',
    list: async () => presets.list().map((p) => ({ id: p.name, value: p })),
    read: async (_subject, name) => presets.get(name),
    write: async (_subject, name, body) => {
      await presets.put(name, body);
      return presets.get(name);
    },
    remove: async (_subject, name) => (await presets.remove(name), true),
  };
}
