import type { ErrorObject } from 'ajv';

/**
 * A validator ajv generated at build time (scripts/gen-validators.js): true when `data` is valid; else its `errors`
 * say why, exactly as a validator ajv compiled at run time would.
 */
export type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
