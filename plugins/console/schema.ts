/**
 * @module
 * The console plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */

export interface ConsoleConfig {
  /** auto: on when the gateway listens on a loopback address only; true/false: always on / off. */
  enabled: 'auto' | boolean;
  session_ttl_hours: number;
  /** No longer used: the aggregates are kept as records are written (accepted so that old configs still load). */
  rollup_interval_ms?: number;
  /** No longer used (see rollup_interval_ms). */
  rollup_lag_ms?: number;
  /** What the console calls a credit (e.g. USD): its money columns and tiles are labelled with it. */
  credit_unit: string;
  /** Single sign-on with OpenID Connect (sso.ts); absent: sign-in with a key only. */
  sso?: SsoConfig;
}

/** The console's OpenID Connect relying party: the issuer, the client, and which claim values give which role. */
export interface SsoConfig {
  /** The issuer's URL (its /.well-known/openid-configuration is read at start). */
  issuer: string;
  client_id: string;
  /** From the environment: `client_secret: ${SSO_CLIENT_SECRET}`. Absent: a public client (PKCE only). */
  client_secret?: string;
  /** Default: the gateway's own /console/sso/callback, as the browser reached it. */
  redirect_uri?: string;
  scopes: string[];
  /** The ID token (or userinfo) claim that holds the user's groups or roles: a string or a list of strings. */
  role_claim: string;
  /** Claim value -> console role; a user with several gets the highest. */
  roles: Record<string, 'admin' | 'operator' | 'viewer'>;
  /** The role of a user whose claim maps to none; absent: such a user is refused. */
  default_role?: 'admin' | 'operator' | 'viewer';
  /** The button's text on the sign-in page. */
  label: string;
}

const SSO_ROLE = { enum: ['admin', 'operator', 'viewer'] };

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { enum: ['auto', true, false], default: 'auto' },
    session_ttl_hours: { type: 'number', exclusiveMinimum: 0, maximum: 720, default: 12 },
    rollup_interval_ms: { type: 'integer', minimum: 100 },
    rollup_lag_ms: { type: 'integer', minimum: 0 },
    credit_unit: { type: 'string', minLength: 1, maxLength: 16, default: 'credits' },
    sso: {
      type: 'object',
      additionalProperties: false,
      required: ['issuer', 'client_id', 'role_claim'],
      properties: {
        issuer: { type: 'string', pattern: '^https?://' },
        client_id: { type: 'string', minLength: 1 },
        client_secret: { type: 'string', minLength: 1 },
        redirect_uri: { type: 'string', pattern: '^https?://' },
        scopes: { type: 'array', items: { type: 'string', minLength: 1 }, default: ['openid', 'profile', 'email'] },
        role_claim: { type: 'string', minLength: 1 },
        roles: { type: 'object', additionalProperties: SSO_ROLE, default: {} },
        default_role: SSO_ROLE,
        label: { type: 'string', minLength: 1, maxLength: 60, default: 'Sign in with SSO' },
      },
    },
  },
};
