/**
 * @module
 * The routing plugin's CLI: `gateway presets list | set NAME JSON | delete NAME` on the store's presets (the admin
 * API's, /v1/presets); gateway.yaml's are listed and read-only. Each change in the audit log.
 */
import {
  auditCli,
  errors,
  fail,
  PresetBook,
  print,
  withStore,
  type CliCommand,
  type PresetConfig,
} from '../../src/plugin';
import { bodies } from './generated/bodies';
import { checkPreset } from './presets';
import { PresetRepo } from './store/presets';

function list(args: string[]): Promise<number> {
  return withStore(args, {}, async (store, v, _pos, config) => {
    const book = new PresetBook(config.presets);
    book.replaceStored(await new PresetRepo(store.db).all());
    print(
      book.list().map((l) => ({ ...l.preset, source: l.source })),
      v.json === true,
    );
    return 0;
  });
}

function set(args: string[]): Promise<number> {
  return withStore(args, {}, async (store, v, [name, text], config) => {
    if (!name || !text) return fail('usage: presets set NAME \'{"model": "...", "provider": {...}}\'');
    if (config.presets.some((p) => p.name === name)) return fail(`the preset '${name}' is set in gateway.yaml`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return fail('the preset must be a JSON object');
    }
    if (!bodies.preset(body)) return fail(`not a preset: ${JSON.stringify(bodies.preset.errors?.[0] ?? {})}`);
    const preset = { ...(body as object), name } as PresetConfig;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) return fail('a preset name is 1-64 of A-Z a-z 0-9 _ . -');
    try {
      checkPreset(preset, {
        has: (id) => config.models.some((m) => m.id === id),
        hasProvider: (n) => config.providers.some((p) => p.name === n),
      });
    } catch (e) {
      return fail(e instanceof Error ? e.message : String(e));
    }
    const repo = new PresetRepo(store.db);
    const before = (await repo.get(name)) ?? null;
    await repo.put(preset);
    await auditCli(store, { action: 'preset.set', target: `preset:${name}`, before, after: preset });
    print([{ ...preset, source: 'store' }], v.json === true);
    return 0;
  });
}

function remove(args: string[]): Promise<number> {
  return withStore(args, {}, async (store, v, [name]) => {
    if (!name) return fail('usage: presets delete NAME');
    const repo = new PresetRepo(store.db);
    const before = await repo.get(name);
    if (!before || !(await repo.delete(name)))
      return fail(errors.notFound('preset_not_found', `no preset '${name}'`).message);
    await auditCli(store, { action: 'preset.delete', target: `preset:${name}`, before, after: null });
    print([{ name, deleted: true }], v.json === true);
    return 0;
  });
}

export const presetCommands: CliCommand[] = [
  {
    name: 'presets',
    usage: 'presets list|set|delete ...',
    summary: "list presets; make or change one the admin API's way; delete one",
    help: [
      "presets list                      gateway.yaml's (read-only) and the store's",
      'presets set NAME JSON             e.g. \'{"model": "m", "provider": {"sort": "price"}}\'',
      'presets delete NAME',
    ],
    run: (args) => {
      const [sub, ...rest] = args;
      if (sub === 'list') return list(rest);
      if (sub === 'set') return set(rest);
      if (sub === 'delete') return remove(rest);
      return Promise.resolve(fail('usage: presets list | presets set NAME JSON | presets delete NAME'));
    },
  },
];
