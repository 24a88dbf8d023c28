import type Koa from 'koa';
import type { Principal, Role } from '../pipeline/state';
import type { SharedServices } from '../pipeline/shared-services';

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

export function getAuthenticate(shared: SharedServices): Authenticate | undefined {
  return shared.get(AUTHENTICATE);
}

/**
 * The admin API's check (set by the auth plugin): the caller's principal when it has at least the role `least`
 * (src/auth/roles.ts; `admin` when not given), else a 401 (no or a wrong key, through the failed-auth throttle) or a
 * 403 `role_required` naming the role. Every admin route names its least role: reads `viewer`, changes `operator`,
 * the admin key, SSO settings and roles `admin`. A plugin that adds admin routes (limits' /v1/keys/{hash}/limits)
 * calls it first; without it, it adds none.
 */
export type AdminGuard = (ctx: Koa.Context, least?: Role) => Promise<Principal>;
export const ADMIN_GUARD = 'admin.guard';

/** A guard for GET /v1/models (set by the auth plugin when `protect_models` is on). */
export type RouteGuard = (ctx: Koa.Context) => Promise<void>;
export const MODELS_GUARD = 'models.guard';

/** Which models a caller may see in GET /v1/models (set by the limits plugin; absent = all). */
export type ModelsFilter = (ctx: Koa.Context) => Promise<(modelId: string) => boolean>;
export const MODELS_FILTER = 'models.filter';

/**
 * Failed-authentication throttling per client address (set by the limits plugin): `check`
 * throws a 429 GatewayError while an address has failed too often, `failed` counts one failure.
 */
export interface AuthThrottle {
  check(address: string): void;
  failed(address: string): void;
}
export const AUTH_THROTTLE = 'auth.throttle';

/** Drop a key from the auth cache at once (after disabling it from elsewhere, e.g. the console). */
export type ForgetKey = (hash: string) => void;
export const FORGET_KEY = 'auth.forgetKey';
