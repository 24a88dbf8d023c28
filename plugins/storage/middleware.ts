/**
 * @module
 * The storage plugin's step on the chat chain: a completion (plain or streamed, any provider) is stored as a response
 * unless the request says `store: false` or its model is excluded; a responses request gets a saver for the object
 * it answers with; embeddings are never stored.
 */
import {
  deferWrite,
  INPUT_ITEMS,
  RESPONSE_SAVER,
  type GatewayContext,
  type GatewayState,
  type Next,
  type ResponseSaver,
} from '../../src/plugin';
import { StreamAssembler, partsOfCompletion } from './assemble';
import { putStatement } from './store/repo';
import type { ResponseWriter } from './writer';

export interface StorageDeps {
  /** Models whose responses are never stored. */
  disabled: ReadonlySet<string>;
  /** Models whose responses are stored without content. */
  noContent: ReadonlySet<string>;
  writer: ResponseWriter;
}

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

export function storageMiddleware({ disabled, noContent, writer }: StorageDeps) {
  return async function storage(ctx: GatewayContext, next: Next): Promise<void> {
    const s = ctx.state.gateway;
    const wanted = s.options.store !== false && !disabled.has(s.model.id);
    if (s.operation !== 'chat')
      return storeOperation(
        s,
        wanted && s.operation === 'responses',
        noContent.has(s.model.id),
        (body, status) => writer.put(ctx, body, status),
        next,
      );
    await next();
    if (!wanted || !s.result || s.result.kind === 'embeddings') return;
    if (s.result.kind === 'completion') {
      const body = s.result.body;
      const stored = () => writer.responseOf(ctx, partsOfCompletion(body), 'completed', body.usage ?? null);
      // With credit in the chain: in its settlement's transaction, built when it settles. Without:
      // once the whole chain has returned. Either way, after the plugins inside those points edited it.
      if (deferWrite(s.extensions, () => putStatement(writer.recordOf(ctx, stored(), 'completed')))) return;
      (s.beforeAnswer ??= []).push(() => writer.put(ctx, stored(), 'completed'));
      return;
    }
    const assembler = new StreamAssembler();
    s.result.stream.observe({
      name: 'storage',
      readOnly: true,
      // What the client got, after every plugin outside this one had its say (a redactor's edits included).
      onWritten: (chunk) => assembler.push(chunk),
      onEnd: (end) =>
        writer.save(ctx, assembler.choices, end.error || end.cancelled ? 'incomplete' : 'completed', end.usage),
    });
  };
}
