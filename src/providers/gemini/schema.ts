/**
 * Gemini accepts an OpenAPI-3 subset of JSON Schema: no additionalProperties, $schema,
 * $ref/$defs, const, examples... This resolves local $refs and keeps only what it takes.
 */
const KEEP = new Set([
  'type',
  'format',
  'description',
  'nullable',
  'enum',
  'properties',
  'required',
  'items',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'anyOf',
  'propertyOrdering',
  'title',
]);

export function cleanSchema(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (depth > 32 || schema === null || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map((s) => cleanSchema(s, root, depth + 1));
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === 'string') {
    const target = s.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>(
        (node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
        root,
      );
    return cleanSchema(target ?? { type: 'object' }, root, depth + 1);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (!KEEP.has(k)) continue;
    if (k === 'properties' && v && typeof v === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(v as Record<string, unknown>).map(([name, sub]) => [name, cleanSchema(sub, root, depth + 1)]),
      );
    } else if (k === 'items' || k === 'anyOf') out[k] = cleanSchema(v, root, depth + 1);
    else if (k === 'type' && Array.isArray(v)) {
      // ["string", "null"] -> type string, nullable
      const types = v.filter((t) => t !== 'null');
      out.type = types[0] ?? 'string';
      if (types.length < v.length) out.nullable = true;
    } else out[k] = v;
  }
  if ('const' in s && !('enum' in s)) out.enum = [s.const];
  return out;
}
