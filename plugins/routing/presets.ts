/**
 * @module
 * Presets through the admin API: GET /v1/presets and /v1/presets/{name} (viewer and above), PUT and DELETE
 * /v1/presets/{name} (operator and above; each change in the audit log). Kept in the store (routing_presets), loaded
 * into the core's preset book at start, at once on this replica's changes and every `presets_refresh_ms` for the
 * others'. gateway.yaml's presets are listed, read-only (409). The console edits them through the same PresetAdmin,
 * as the `presets` admin section (presets-section.ts).
 */
import type Router from '@koa/router';
import {
  ADMIN_GUARD,
  adminSections,
  bodyChecker,
  errors,
  GatewayError,
  readJsonBody,
  recordAudit,
  type AdminGuard,
  type ModelRegistry,
  type PresetBook,
  type PluginServices,
  type PresetConfig,
  PRESETS,
  type Store,
  storeResting,
} from '../../src/plugin';
import { bodies } from './generated/bodies';
import { presetsSection } from './presets-section';
import { PresetRepo } from './store/presets';

const checkPresetBody = bodyChecker<Omit<PresetConfig, 'name'> & { name?: string }>(bodies.preset);

export const presetJson = (p: PresetConfig, source: 'config' | 'store') => ({ ...p, source });

/** A preset's models and provider names must exist, as gateway.yaml's are checked at start. */
export function checkPreset(p: PresetConfig, models: Pick<ModelRegistry, 'has' | 'hasProvider'>): void {
  const ids = [p.model, ...(p.models ?? [])].filter((id): id is string => id !== undefined);
  if (ids.length === 0) throw errors.invalidRequest('A preset names a model or models', 'model', 'missing_field');
  for (const id of ids)
    if (!models.has(id) && !models.has(id.replace(/:[a-z]+$/, '')))
      throw errors.invalidRequest(`No model '${id.slice(0, 200)}'`, 'model', 'model_not_found');
  for (const f of ['order', 'only', 'ignore'] as const)
    for (const n of p.provider?.[f] ?? [])
      if (!models.hasProvider(n))
        throw errors.invalidRequest(`No provider named '${n.slice(0, 64)}'`, `provider.${f}`, 'unknown_provider');
}

/** The presets' reads and changes, for the admin API and the console alike (each audits on its own). */
export class PresetAdmin {
  private readonly repo: PresetRepo;

  constructor(
    store: Store,
    private readonly book: PresetBook,
    private readonly models: ModelRegistry,
  ) {
    this.repo = new PresetRepo(store.db);
  }

  /** Read the store's presets into the book (at start, on a change, and on a timer). */
  async reload(): Promise<void> {
    this.book.replaceStored(await this.repo.all());
  }

  list() {
    return this.book.list().map((l) => presetJson(l.preset, l.source));
  }

  get(name: string) {
    const p = this.book.get(name);
    if (!p) throw missing(name);
    return presetJson(p, this.book.isFixed(p.name) ? 'config' : 'store');
  }

  /** The stored preset (null when none): the audit's `before`. */
  async stored(name: string): Promise<PresetConfig | null> {
    return (await this.repo.get(name)) ?? null;
  }

  /** Check `body` whole (400 naming the field; 409 for gateway.yaml's), then store it as preset `name`. */
  async put(name: string, body: unknown): Promise<PresetConfig> {
    if (this.book.isFixed(name)) throw fixed(name);
    const preset = { ...checkPresetBody(body), name } as PresetConfig;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
      throw errors.invalidRequest('A preset name is 1-64 of A-Z a-z 0-9 _ . -', 'name', 'invalid_value');
    checkPreset(preset, this.models);
    await this.repo.put(preset);
    await this.reload();
    return preset;
  }

  /** Delete stored preset `name`; what it was (404 when there is none, 409 for gateway.yaml's). */
  async remove(name: string): Promise<PresetConfig> {
    if (this.book.isFixed(name)) throw fixed(name);
    const before = await this.repo.get(name);
    if (!before || !(await this.repo.delete(name))) throw missing(name);
    await this.reload();
    return before;
  }
}

function fixed(name: string): GatewayError {
  return new GatewayError({
    status: 409,
    type: 'invalid_request_error',
    code: 'invalid_request',
    param: 'name',
    message: `The preset '${name}' is set in gateway.yaml; change it there`,
  });
}

function missing(name: string): GatewayError {
  return errors.notFound('preset_not_found', `There is no preset named '${name.slice(0, 64)}'`, 'name');
}

export function registerPresetRoutes(router: Router, store: Store, admin: AdminGuard, presets: PresetAdmin): void {
  router.get('/v1/presets', async (ctx) => {
    await admin(ctx, 'viewer');
    ctx.body = { data: presets.list() };
  });
  router.get('/v1/presets/:name', async (ctx) => {
    await admin(ctx, 'viewer');
    ctx.body = { data: presets.get(ctx.params.name) };
  });
  router.put('/v1/presets/:name', async (ctx) => {
    const principal = await admin(ctx, 'operator');
    const name = ctx.params.name;
    const before = await presets.stored(name);
    const preset = await presets.put(name, await readJsonBody(ctx));
    await recordAudit(store, ctx, principal, { action: 'preset.set', target: `preset:${name}`, before, after: preset });
    ctx.body = { data: presetJson(preset, 'store') };
  });
  router.delete('/v1/presets/:name', async (ctx) => {
    const principal = await admin(ctx, 'operator');
    const name = ctx.params.name;
    const before = await presets.remove(name);
    await recordAudit(store, ctx, principal, {
      action: 'preset.delete',
      target: `preset:${name}`,
      before,
      after: null,
    });
    ctx.status = 204;
  });
}

/**
 * The presets admin API (with the auth plugin's admin check) and the console's `presets` section: the store's
 * presets loaded now and every `everyMs`.
 */
export async function presetRoutes(everyMs: number, services: PluginServices): Promise<NodeJS.Timeout | undefined> {
  const book = services.shared.get(PRESETS);
  if (!book) return undefined;
  const presets = new PresetAdmin(services.store, book, services.models);
  const admin = services.shared.get(ADMIN_GUARD);
  if (admin) registerPresetRoutes(services.router, services.store, admin, presets);
  adminSections(services.shared).register(presetsSection(presets));
  await presets.reload();
  const reload = () =>
    presets.reload().catch((err: unknown) => services.logger.warn({ err }, 'presets: reload failed'));
  // Not while a SQLite store's worker rests: only a CLI command can have changed them, and waking it each round
  // would keep an idle gateway's worker thread for ever.
  const timer = setInterval(() => void (storeResting(services.store.db) || reload()), everyMs);
  timer.unref();
  return timer;
}
