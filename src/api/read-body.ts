import type { GatewayContext } from '../pipeline/plugin';
import { errors } from '../errors';
import type { Authenticate } from '../auth/contract';
import { authenticateFirst } from '../http/early-auth';
import { readJson } from './read-json';

/** The body of a request whose `input` is required (/v1/responses, /v1/embeddings): a JSON object that has one. */
export async function readInputBody(
  ctx: GatewayContext,
  deps: Parameters<typeof readChainBody>[1],
): Promise<Record<string, unknown> & { input: unknown }> {
  const body = await readChainBody(ctx, deps);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object', null, 'invalid_body');
  }
  const b = body as Record<string, unknown>;
  if (b.input === undefined || b.input === null)
    throw errors.invalidRequest('input is required', 'input', 'missing_field');
  return b as Record<string, unknown> & { input: unknown };
}

/**
 * The body of a chain request, read the same way on every endpoint: the key is checked from
 * the headers first (when the auth plugin is in the chain), so an unauthenticated client
 * cannot make the gateway read its body; then the JSON within the size and depth limits.
 */
export function readChainBody(
  ctx: GatewayContext,
  deps: { authenticate?: Authenticate; limit: number; limitText: string; maxDepth: number },
): Promise<unknown> {
  // Not an async function: returning readJson's promise from one costs the caller two more turns of the microtask
  // queue (the promise is adopted), on every request.
  const read = () => readJson(ctx.req, deps.limit, deps.limitText, deps.maxDepth);
  return deps.authenticate ? authenticateFirst(ctx, deps.authenticate).then(read) : read();
}
