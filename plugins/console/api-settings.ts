/**
 * @module
 * Other plugins' settings in the console (decision 0048): the sections they register in the `admin.sections` slot,
 * served under /console/api/settings with the session, its role, CSRF (the session's check on every write) and the
 * audit log. The console imports no plugin: it knows a section only by what the slot holds.
 *
 * GET    /console/api/settings                                 the sections (their forms), for any session
 * GET    /console/api/settings/{section}/item                  the items of an `item` section
 * GET    /console/api/settings/{section}/{subject}/{id}        one value (subject key, account, gateway (id -), item)
 * PUT    /console/api/settings/{section}/{subject}/{id}        set it (audited `<section>.set`, before and after)
 * DELETE /console/api/settings/{section}/item/{id}             delete an item (audited `<section>.delete`)
 * POST   /console/api/settings/{section}/actions/{action}      run an action (audited `<section>.<action>`)
 */
import type Router from '@koa/router';
import {
  adminSections,
  errors,
  existingSubject,
  hasRole,
  readJsonBody,
  requireRole,
  type AdminSection,
  type SectionSubject,
  type SharedServices,
  type Store,
} from '../../src/plugin';
import { audit } from './audit';
import type { ServiceContext } from './context';
import { principalOf, type ConsoleSession } from './session';

type Ctx = Parameters<Router.Middleware>[0];

/** Any JSON value: the section checks its own body (its generated validator) before it writes anything. */
const readBody = readJsonBody;

const SUBJECTS: readonly SectionSubject[] = ['key', 'account', 'gateway', 'item'];

/** The section a path names, and the subject it is asked about (404 when the section does not have that subject). */
function sectionOf(shared: SharedServices, name: string, subject?: string): AdminSection {
  const s = adminSections(shared).get(name);
  if (!s) throw errors.notFound('not_found', `No settings section '${name.slice(0, 40)}'`, 'section');
  if (
    subject !== undefined &&
    !(SUBJECTS.includes(subject as SectionSubject) && s.subjects.includes(subject as SectionSubject))
  )
    throw errors.notFound(
      'not_found',
      `The section '${s.name}' has no settings per ${subject.slice(0, 20)}`,
      'subject',
    );
  return s;
}

/** The section's form and roles as the front end draws them (its functions stay on the server). */
export function sectionJson(s: AdminSection) {
  return {
    name: s.name,
    title: s.title,
    description: s.description ?? null,
    subjects: s.subjects,
    fields: s.fields,
    schema: s.schema,
    roles: { read: s.roles?.read ?? 'viewer', write: s.roles?.write ?? 'operator' },
    actions: Object.entries(s.actions ?? {}).map(([name, a]) => ({
      name,
      title: a.title,
      description: a.description ?? null,
      fields: a.fields,
      role: a.role ?? 'operator',
    })),
    views: Object.entries(s.views ?? {}).map(([name, v]) => ({
      name,
      title: v.title,
      description: v.description ?? null,
      filters: v.filters,
      role: v.role ?? s.roles?.read ?? 'viewer',
    })),
  };
}

/**
 * The subject exists (a key by its full hash, an account by id; the gateway is `-`) and the session may read it: the
 * section's read role, or an account's own session for its own account and keys.
 */
async function readable(store: Store, s: ConsoleSession, section: AdminSection, subject: SectionSubject, id: string) {
  if (subject === 'key' || subject === 'account') await existingSubject(store, subject, id);
  else if (subject === 'gateway' && id !== '-')
    throw errors.notFound('not_found', 'The gateway subject is named -', 'id');
  const least = section.roles?.read ?? 'viewer';
  if (hasRole(principalOf(s), least)) return;
  if (ownReadable(s, section)) {
    if (subject === 'account' && id === s.accountId) return;
    if (subject === 'key' && (await store.keys.get(id))?.accountId === s.accountId) return;
  }
  requireRole(principalOf(s), least);
}

/**
 * An account's own session may read its own key's and account's values of a section whose read role is the default
 * (`viewer`); a section that sets a higher one keeps them from it.
 */
function ownReadable(s: ConsoleSession, section: AdminSection): boolean {
  return s.role === 'account' && (section.roles?.read ?? 'viewer') === 'viewer';
}

/** A write: the section's write role (operator unless it says) and a subject that exists. */
async function writable(store: Store, s: ConsoleSession, section: AdminSection, subject: SectionSubject, id: string) {
  requireRole(principalOf(s), section.roles?.write ?? 'operator');
  if (subject === 'key' || subject === 'account') await existingSubject(store, subject, id);
  else if (subject === 'gateway' && id !== '-')
    throw errors.notFound('not_found', 'The gateway subject is named -', 'id');
}

export function registerSettingsRoutes(router: Router, deps: Pick<ServiceContext, 'store' | 'shared' | 'need'>): void {
  const { store, shared, need } = deps;
  router.get('/console/api/settings', async (ctx) => {
    await need(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: adminSections(shared).list().map(sectionJson) };
  });
  router.get('/console/api/settings/:section/item', async (ctx) => {
    const s = await need(ctx);
    const section = sectionOf(shared, ctx.params.section, 'item');
    requireRole(principalOf(s), section.roles?.read ?? 'viewer');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: section.list ? await section.list() : [] };
  });
  router.get('/console/api/settings/:section/:subject/:id', async (ctx) => {
    const s = await need(ctx);
    const { section, subject, id } = target(ctx, shared);
    await readable(store, s, section, subject, id);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: await section.read(subject, id) };
  });
  router.put('/console/api/settings/:section/:subject/:id', async (ctx) => {
    const s = await need(ctx);
    const { section, subject, id } = target(ctx, shared);
    await writable(store, s, section, subject, id);
    const body = await readBody(ctx);
    const before =
      subject === 'item' ? await section.read(subject, id).catch(() => null) : await section.read(subject, id);
    const after = await section.write(subject, id, body, { principal: principalOf(s) });
    await audit(store, ctx, s, {
      action: `${section.audit ?? section.name}.set`,
      target: `${subject}:${id}`,
      before,
      after,
    });
    ctx.body = { data: after };
  });
  router.delete('/console/api/settings/:section/item/:id', async (ctx) => {
    const s = await need(ctx);
    const section = sectionOf(shared, ctx.params.section, 'item');
    const id = ctx.params.id;
    requireRole(principalOf(s), section.roles?.write ?? 'operator');
    const before = await section.read('item', id);
    if (!section.remove || !(await section.remove('item', id, { principal: principalOf(s) })))
      throw errors.notFound('not_found', `No item '${id.slice(0, 64)}'`, 'id');
    await audit(store, ctx, s, {
      action: `${section.audit ?? section.name}.delete`,
      target: `item:${id}`,
      before,
      after: null,
    });
    ctx.body = { data: { id, deleted: true } };
  });
  router.post('/console/api/settings/:section/actions/:action', async (ctx) => {
    const s = await need(ctx);
    const section = sectionOf(shared, ctx.params.section);
    const name = ctx.params.action;
    const action = Object.hasOwn(section.actions ?? {}, name) ? section.actions?.[name] : undefined;
    if (!action)
      throw errors.notFound(
        'not_found',
        `The section '${section.name}' has no action '${name.slice(0, 40)}'`,
        'action',
      );
    requireRole(principalOf(s), action.role ?? 'operator');
    const body = await readBody(ctx);
    const done = await action.run(body, { principal: principalOf(s) });
    await audit(store, ctx, s, {
      action: `${section.audit ?? section.name}.${name}`,
      target: section.name,
      before: body,
      after: done,
    });
    ctx.body = { data: done };
  });
}

/** The section, subject and id of a /console/api/settings/{section}/{subject}/{id} path. */
function target(ctx: Ctx, shared: SharedServices): { section: AdminSection; subject: SectionSubject; id: string } {
  const section = sectionOf(shared, ctx.params.section, ctx.params.subject);
  return { section, subject: ctx.params.subject as SectionSubject, id: ctx.params.id };
}

/**
 * What each section says of each subject of a list page (the keys' and accounts' "Settings" column): section name ->
 * text, per id. Sections the session may not read are left out (an account's session lists its own subjects only).
 */
export async function settingsSummaries(
  shared: SharedServices,
  s: ConsoleSession,
  subject: 'key' | 'account',
  ids: readonly string[],
): Promise<Map<string, Record<string, string>>> {
  const out = new Map<string, Record<string, string>>(ids.map((id) => [id, {}]));
  if (ids.length === 0) return out;
  for (const section of adminSections(shared).list()) {
    if (!section.summarize || !section.subjects.includes(subject)) continue;
    // An account's session lists its own subjects only (the keys and accounts routes see to that).
    if (!ownReadable(s, section) && !hasRole(principalOf(s), section.roles?.read ?? 'viewer')) continue;
    for (const [id, text] of await section.summarize(subject, ids)) {
      const row = out.get(id);
      if (row) row[section.name] = text;
    }
  }
  return out;
}
