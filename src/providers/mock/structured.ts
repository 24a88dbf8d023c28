import type { ChatRequest } from '../../types/openai';
import { SampleBudget } from './bounds';

type Schema = Record<string, unknown>;

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A local `$ref` (#/$defs/x, #/definitions/x, #) resolved against the root schema. */
function resolve(s: Schema, root: Schema): Schema {
  if (typeof s.$ref !== 'string' || !s.$ref.startsWith('#')) return s;
  const target = s.$ref
    .slice(1)
    .split('/')
    .filter(Boolean)
    .reduce<unknown>(
      (node, key) => (isSchema(node) ? node[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined),
      root,
    );
  return isSchema(target) ? target : {};
}

const FORMATS: Record<string, string> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00',
  email: 'mock@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '127.0.0.1',
};

function sampleString(s: Schema, name: string, budget: SampleBudget): string {
  if (typeof s.format === 'string' && Object.hasOwn(FORMATS, s.format)) return FORMATS[s.format];
  let v = `mock ${name}`;
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  budget.take(Math.max(min, v.length)); // before the string is made: minLength 1e9 is refused, not built
  if (v.length < min) v += 'x'.repeat(min - v.length);
  return v.slice(0, max);
}

function sampleNumber(s: Schema, integer: boolean): number {
  const lo =
    typeof s.minimum === 'number'
      ? s.minimum
      : typeof s.exclusiveMinimum === 'number'
        ? s.exclusiveMinimum + (integer ? 1 : 0.5)
        : undefined;
  const hi =
    typeof s.maximum === 'number'
      ? s.maximum
      : typeof s.exclusiveMaximum === 'number'
        ? s.exclusiveMaximum - (integer ? 1 : 0.5)
        : undefined;
  let v = lo ?? (hi !== undefined ? Math.min(1, hi) : 1);
  if (integer) v = Math.ceil(v);
  return v;
}

/** A value the schema gives as it is (const, enum), its JSON's length taken from the budget. */
function charged(v: unknown, budget: SampleBudget): unknown {
  budget.take(JSON.stringify(v)?.length ?? 4);
  return v;
}

/**
 * A value that satisfies a JSON Schema of the kind structured outputs use (objects with
 * required properties, arrays, enums, const, anyOf, $ref/$defs, nullable types, string
 * formats and bounds). Deterministic: the same schema gives the same value. At most MOCK_LIMITS.sampleBytes of it
 * (./bounds.ts): past that a 400 naming `budget.param`, thrown before the value is built.
 */
export function sampleSchema(
  schema: unknown,
  name = 'value',
  root: Schema = isSchema(schema) ? schema : {},
  depth = 0,
  budget: SampleBudget = new SampleBudget('response_format'),
): unknown {
  if (!isSchema(schema) || depth > 24) return null;
  const s = resolve(schema, root);
  if ('const' in s) return charged(s.const, budget);
  if (Array.isArray(s.enum) && s.enum.length > 0) return charged(s.enum[0], budget);
  const alt = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as
    unknown[] | undefined;
  if (alt && alt.length > 0)
    return sampleSchema(alt.find((a) => isSchema(a) && a.type !== 'null') ?? alt[0], name, root, depth + 1, budget);
  if (Array.isArray(s.allOf) && s.allOf.length > 0)
    return sampleSchema(
      Object.assign({}, ...s.allOf.filter(isSchema).map((a) => resolve(a, root))),
      name,
      root,
      depth + 1,
      budget,
    );
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const type =
    types.find((t) => t !== 'null') ??
    (types.includes('null') ? 'null' : s.properties ? 'object' : s.items ? 'array' : undefined);
  switch (type) {
    case 'object': {
      // Own keys only (`required: ["__proto__"]` names a property, not the prototype), null-prototype output.
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      const props = isSchema(s.properties) ? s.properties : {};
      const keys = Array.isArray(s.required) ? (s.required as string[]) : Object.keys(props);
      for (const key of keys) {
        budget.take(String(key).length + 4);
        out[key] = sampleSchema(Object.hasOwn(props, key) ? props[key] : {}, key, root, depth + 1, budget);
      }
      return out;
    }
    case 'array': {
      const n = typeof s.minItems === 'number' ? Math.max(1, s.minItems) : 1;
      const max = typeof s.maxItems === 'number' ? s.maxItems : n;
      const length = Math.min(n, max);
      budget.take(length); // a byte (a comma) an item at least, before the array is made
      return Array.from({ length }, () => sampleSchema(s.items ?? {}, name, root, depth + 1, budget));
    }
    case 'integer':
    case 'number': {
      const v = sampleNumber(s, type === 'integer');
      budget.take(String(v).length);
      return v;
    }
    case 'boolean':
      budget.take(4);
      return true;
    case 'null':
      budget.take(4);
      return null;
    case 'string':
      return sampleString(s, name, budget);
    default:
      budget.take(name.length + 5);
      return `mock ${name}`;
  }
}

/** The mock's answer text under response_format: JSON for json_object, a schema-valid value for json_schema. */
export function structuredText(req: ChatRequest, plain: string): string | undefined {
  const rf = req.response_format;
  if (rf?.type === 'json_object') return JSON.stringify({ answer: plain });
  if (rf?.type === 'json_schema') {
    const js = rf.json_schema as { schema?: unknown; name?: string } | undefined;
    return JSON.stringify(sampleSchema(js?.schema ?? { type: 'object' }, js?.name ?? 'value'));
  }
  return undefined;
}

export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

/** Deterministic log probabilities of the mock's tokens: a function of the token's text and position only. */
export function tokenLogprobs(pieces: string[], top: number, offset = 0): TokenLogprob[] {
  return pieces.map((token, i) => {
    let h = offset + i;
    for (const c of token) h = (h * 31 + c.charCodeAt(0)) % 1000;
    const logprob = -Math.round((h / 1000) * 1e4) / 1e4;
    const alternatives = Array.from({ length: Math.max(0, top - 1) }, (_, k) => {
      const alt = `${token.trim() || token}${k + 1}`;
      return { token: alt, logprob: logprob - (k + 1), bytes: [...Buffer.from(alt)] };
    });
    return {
      token,
      logprob,
      bytes: [...Buffer.from(token)],
      top_logprobs: top > 0 ? [{ token, logprob, bytes: [...Buffer.from(token)] }, ...alternatives] : [],
    };
  });
}
