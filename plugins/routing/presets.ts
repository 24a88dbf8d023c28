/**
 * @module
 * Presets through the admin API: GET /v1/presets and /v1/presets/{name} (viewer and above), PUT and DELETE
 * /v1/presets/{name} (operator and above; each change in the audit log). Kept in the store (routing_presets), loaded
 * into the core's preset book at start, at once on this replica's changes and every `presets_refresh_ms` for the
 * others'. gateway.yaml's presets are listed, read-only (409).
 */
import type Router from '@koa/router';
import {
  ADMIN_GUARD,
  bodyReader,
  errors,
  GatewayError,
  recordAudit,
  type AdminGuard,
  type ModelRegistry,
  type PresetBook,
  type PluginServices,
  type PresetConfig,
  PRESETS,
  type Store,
} from '../../src/plugin';
import { bodies } from './generated/bodies';
import { PresetRepo } from './store/presets';

const readPreset = bodyReader<Omit<PresetConfig, 'name'> & { name?: string }>(bodies.preset);

const json = (p: PresetConfig, source: 'config' | 'store') => ({ ...p, source });

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

export interface PresetRoutes {
  /** Read the store's presets into the book (at start, and on a timer). */
  reload(): Promise<void>;
}

export function registerPresetRoutes(
  router: Router,
  store: Store,
  admin: AdminGuard,
  book: PresetBook,
  models: ModelRegistry,
): PresetRoutes {
  const repo = new PresetRepo(store.db);
  const reload = async () => book.replaceStored(await repo.all());
  const fixed = (name: string) =>
    new GatewayError({
      status: 409,
      type: 'invalid_request_error',
      code: 'invalid_request',
      param: 'name',
      message: `The preset '${name}' is set in gateway.yaml; change it there`,
    });
  const missing = (name: string) =>
    errors.notFound('preset_not_found', `There is no preset named '${name.slice(0, 64)}'`, 'name');
  router.get('/v1/presets', async (ctx) => {
    await admin(ctx, 'viewer');
    ctx.body = { data: book.list().map((l) => json(l.preset, l.source)) };
  });
  router.get('/v1/presets/:name', async (ctx) => {
    await admin(ctx, 'viewer');
    const p = book.get(ctx.params.name);
    if (!p) throw missing(ctx.params.name);
    ctx.body = { data: json(p, book.isFixed(p.name) ? 'config' : 'store') };
  });
  router.put('/v1/presets/:name', async (ctx) => {
    const principal = await admin(ctx, 'operator');
    const name = ctx.params.name;
    if (book.isFixed(name)) throw fixed(name);
    const preset = { ...(await readPreset(ctx)), name } as PresetConfig;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
      throw errors.invalidRequest('A preset name is 1-64 of A-Z a-z 0-9 _ . -', 'name', 'invalid_value');
    checkPreset(preset, models);
    const before = (await repo.get(name)) ?? null;
    await repo.put(preset);
    await reload();
    await recordAudit(store, ctx, principal, { action: 'preset.set', target: `preset:${name}`, before, after: preset });
    ctx.body = { data: json(preset, 'store') };
  });
  router.delete('/v1/presets/:name', async (ctx) => {
    const principal = await admin(ctx, 'operator');
    const name = ctx.params.name;
    if (book.isFixed(name)) throw fixed(name);
    const before = await repo.get(name);
    if (!before || !(await repo.delete(name))) throw missing(name);
    await reload();
    await recordAudit(store, ctx, principal, {
      action: 'preset.delete',
      target: `preset:${name}`,
      before,
      after: null,
    });
    ctx.status = 204;
  });
  return { reload };
}

/** The presets admin API (with the auth plugin's admin check): its presets loaded now and every `everyMs`. */
export async function presetRoutes(everyMs: number, services: PluginServices): Promise<NodeJS.Timeout | undefined> {
  const admin = services.shared.get(ADMIN_GUARD);
  const book = services.shared.get(PRESETS);
  if (!admin || !book) return undefined;
  const routes = registerPresetRoutes(services.router, services.store, admin, book, services.models);
  await routes.reload();
  const timer = setInterval(
    () => void routes.reload().catch((err: unknown) => services.logger.warn({ err }, 'presets: reload failed')),
    everyMs,
  );
  timer.unref();
  return timer;
}
