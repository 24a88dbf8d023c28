/**
 * The public plugin API, part "routes": reading and checking request bodies on a plugin's own routes
 * (`services.router`). Re-exports only.
 */
export { bodyChecker, bodyReader, paging, readJsonBody } from '../api/body';
export { readForm, readRaw } from '../api/read-json';
export { auditQuery, serveAudit } from '../api/audit';
/** A validator generated at build time (ajv's standalone code), as a built-in plugin's generated/*.ts exports. */
export type { Validator } from '../validation/validator';
