import type Koa from 'koa';
import type { Principal } from '../pipeline/state';

/**
 * How parts outside the chat chain (models, responses, keys, generation endpoints)
 * authenticate a caller: the auth plugin puts an `Authenticate` function into
 * `services.shared` under AUTHENTICATE at setup. It reads the Bearer token and
 * returns the principal, or throws a 401 GatewayError. When no auth plugin is in the
 * chain, nothing is registered and those endpoints decide for themselves (see getAuthenticate).
 */
export type Authenticate = (ctx: Koa.Context) => Promise<Principal>;
export const AUTHENTICATE = 'auth.authenticate';

/** The same check for a key given some other way (e.g. typed into the OAuth consent form). */
export type AuthenticateKey = (key: string) => Promise<Principal>;
export const AUTHENTICATE_KEY = 'auth.authenticateKey';

export function getAuthenticate(shared: Map<string, unknown>): Authenticate | undefined {
  return shared.get(AUTHENTICATE) as Authenticate | undefined;
}

/** A guard for GET /v1/models (set by the auth plugin when `protect_models` is on). */
export type RouteGuard = (ctx: Koa.Context) => Promise<void>;
export const MODELS_GUARD = 'models.guard';

/** Drop a key from the auth cache at once (after disabling it from elsewhere, e.g. the console). */
export type ForgetKey = (hash: string) => void;
export const FORGET_KEY = 'auth.forgetKey';
