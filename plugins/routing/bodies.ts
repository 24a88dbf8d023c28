import { presetSchema } from '../../src/plugin';

/**
 * JSON Schema of PUT /v1/presets/{name}: a gateway.yaml preset (src/config/schema.ts) whose name is the path's;
 * the validator is generated at build time (scripts/gen-validators.js).
 */
export const presetBody = { ...presetSchema, required: [] };
