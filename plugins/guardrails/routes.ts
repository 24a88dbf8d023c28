/**
 * @module
 * The admin API of key and account policies: GET/PUT /v1/keys/{hash}/guardrails and /v1/accounts/{id}/guardrails
 * (reading needs the viewer role, setting the operator role; every change is in the audit log with before and
 * after). A policy is named, never written here: the policies themselves are the operator's YAML.
 */
import type Router from '@koa/router';
import { bodyReader, errors, existingSubject, recordAudit, type AdminGuard, type Store } from '../../src/plugin';
import { bodies } from './generated/bodies';
import type { Assignments } from './store/assignments';

const readPolicy = bodyReader<{ policy: string | null }>(bodies.policyBody);

export function registerPolicyRoutes(
  router: Router,
  store: Store,
  admin: AdminGuard,
  assignments: Assignments,
  known: ReadonlySet<string>,
): void {
  for (const [subject, path] of [
    ['key', '/v1/keys/:id/guardrails'],
    ['account', '/v1/accounts/:id/guardrails'],
  ] as const) {
    router.get(path, async (ctx) => {
      await admin(ctx, 'viewer');
      await existingSubject(store, subject, ctx.params.id);
      ctx.body = { data: { policy: assignments.get(subject, ctx.params.id) ?? null } };
    });
    router.put(path, async (ctx) => {
      const principal = await admin(ctx, 'operator');
      const id = ctx.params.id;
      await existingSubject(store, subject, id);
      const { policy } = await readPolicy(ctx);
      if (policy !== null && !known.has(policy))
        throw errors.invalidRequest(`No guardrails policy named '${policy.slice(0, 64)}'`, 'policy', 'invalid_value');
      const before = assignments.get(subject, id) ?? null;
      await assignments.set(subject, id, policy);
      await recordAudit(store, ctx, principal, {
        action: 'guardrails.set',
        target: `${subject}:${id}`,
        before: { policy: before },
        after: { policy },
      });
      ctx.body = { data: { policy } };
    });
  }
}
