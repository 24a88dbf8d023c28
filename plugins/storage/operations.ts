import type Router from '@koa/router';
import type Koa from 'koa';
import {
  INPUT_ITEMS,
  RESPONSE_SAVER,
  type GatewayState,
  type ResponseSaver,
  type StoredResponse,
} from '../../src/plugin';

/**
 * Storage for the operations other than chat: a responses request gets a saver (the
 * endpoint stores the object it answered with); embeddings are never stored.
 */
export async function storeOperation(
  s: GatewayState,
  keep: boolean,
  noContent: boolean,
  put: ResponseSaver,
  next: () => Promise<void>,
): Promise<void> {
  if (keep) {
    const saver: ResponseSaver = (body, status) =>
      put(noContent ? { ...body, output: [], [INPUT_ITEMS]: [], content_stored: false } : body, status);
    s.extensions[RESPONSE_SAVER] = saver;
  }
  await next();
}

/** The stored object as GET serves it: without the conversation kept for previous_response_id. */
export function publicBody(body: Record<string, unknown>): Record<string, unknown> {
  if (!(INPUT_ITEMS in body)) return body;
  const { [INPUT_ITEMS]: _items, ...rest } = body;
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
