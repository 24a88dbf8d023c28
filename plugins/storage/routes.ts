/**
 * @module
 * The storage plugin's endpoints: GET and DELETE /responses/{id} (and under /v1), and GET .../input_items.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import {
  errors,
  getAuthenticate,
  INPUT_ITEMS,
  type Principal,
  type SharedServices,
  type StoredResponse,
} from '../../src/plugin';
import type { ResponseRepo } from './store/repo';

const ID = /^(chatcmpl-|resp_)[A-Za-z0-9_-]{1,128}$/;
export const ANONYMOUS = 'anonymous';

/**
 * GET and DELETE /responses/{id}, answered as problem+json on failure (src/app.ts):
 * 400 malformed id, 401 missing or invalid key, 404 unknown or another account's.
 * Without the auth plugin every caller is the one anonymous account.
 */
export function registerResponseRoutes(router: Router, responses: ResponseRepo, shared: SharedServices): void {
  const caller = async (ctx: Koa.Context): Promise<Principal> => {
    const auth = getAuthenticate(shared);
    return auth ? auth(ctx) : { keyHash: '', keyLabel: 'anonymous', accountId: ANONYMOUS, isAdmin: false };
  };
  const find = async (ctx: Koa.Context) => {
    const id = ctx.params.id as string;
    const p = await caller(ctx);
    if (!ID.test(id))
      throw errors.invalidRequest(
        `'${id.slice(0, 64)}' is not a response id (resp_... or chatcmpl-...)`,
        'id',
        'invalid_response_id',
      );
    const r = await responses.get(id);
    // Another account's response is as unknown as a missing one.
    if (!r || (!p.isAdmin && r.accountId !== p.accountId))
      throw errors.notFound('response_not_found', `No response '${id}'`, 'id');
    return r;
  };
  router.get(['/responses/:id', '/v1/responses/:id'], async (ctx) => {
    ctx.body = publicBody((await find(ctx)).body);
  });
  registerInputItemsRoute(router, find);
  router.delete(['/responses/:id', '/v1/responses/:id'], async (ctx) => {
    const r = await find(ctx);
    await responses.delete(r.id);
    ctx.body = { id: r.id, object: 'response.deleted', deleted: true };
  });
}

/** Where a stored chat completion keeps the request's messages (shown by the console's record view only). */
export const REQUEST_MESSAGES = 'request_messages';

/** The stored object as GET serves it: without the conversation kept for previous_response_id and the console. */
export function publicBody(body: Record<string, unknown>): Record<string, unknown> {
  if (!(INPUT_ITEMS in body) && !(REQUEST_MESSAGES in body)) return body;
  const { [INPUT_ITEMS]: _items, [REQUEST_MESSAGES]: _messages, ...rest } = body;
  return rest;
}

/** GET /v1/responses/{id}/input_items (and without /v1): the conversation the response answered, as a list. */
export function registerInputItemsRoute(router: Router, find: (ctx: Koa.Context) => Promise<StoredResponse>): void {
  router.get(['/responses/:id/input_items', '/v1/responses/:id/input_items'], async (ctx) => {
    const items = ((await find(ctx)).body[INPUT_ITEMS] ?? []) as Array<{ id?: string }>;
    ctx.body = {
      object: 'list',
      data: items,
      first_id: items[0]?.id ?? null,
      last_id: items[items.length - 1]?.id ?? null,
      has_more: false,
    };
  });
}
