import { errors } from '../../errors';
import type { FunctionTool, ToolChoice } from '../../types/openai';
import type { CustomToolDef, FunctionToolDef, NamespaceToolDef, ResponsesToolChoice } from '../../types/responses';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A tool the client declared, under the name the model sees. */
export interface DeclaredTool {
  name: string;
  namespace?: string;
  /** A `custom` tool: the model calls a function taking `{input: string}`; the client gets a custom_tool_call. */
  custom: boolean;
}

/**
 * The client's tools as the chat tools the model can call, and the way back: `byModelName` maps a name the model
 * calls to the tool the client declared (its own name, its namespace, whether it is custom).
 */
export interface ToolMap {
  tools: FunctionTool[];
  byModelName: Map<string, DeclaredTool>;
  /** Hosted tools the gateway cannot run, named for X-Gateway-Dropped-Params (`tools[web_search]`). */
  dropped: string[];
}

export const NO_TOOLS: ToolMap = { tools: [], byModelName: new Map(), dropped: [] };

/** The one string argument a custom tool takes when it reaches the model as a function. */
export const CUSTOM_INPUT = 'input';

/** The chat name pattern (^[a-zA-Z0-9_-]{1,64}$): other characters become `_`, longer names are cut. */
function chatName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || '_';
}

/** How a custom tool's input is described to a model that only knows functions. */
function customDescription(t: CustomToolDef): string {
  const base = typeof t.description === 'string' ? t.description : '';
  const f = isRecord(t.format) ? t.format : undefined;
  if (f?.type === 'grammar' && typeof f.definition === 'string') {
    const syntax = typeof f.syntax === 'string' ? f.syntax : 'lark';
    return (
      `${base}\n\nCall this tool with one argument, \`${CUSTOM_INPUT}\`: free text (not JSON) that must match ` +
      `this ${syntax} grammar:\n${f.definition}`
    ).trim();
  }
  return `${base}\n\nCall this tool with one argument, \`${CUSTOM_INPUT}\`: free text (not JSON).`.trim();
}

/** Tool types the gateway maps; any other type is a hosted tool (web_search, file_search, ...) and is dropped. */
const MAPPED_TYPES = new Set(['function', 'custom', 'namespace']);

/**
 * A Responses request's `tools` as chat function tools: function tools as they are, custom tools as a function
 * taking one string, the tools of a namespace flattened to `<namespace>__<name>`. Hosted tools are dropped and named.
 */
export function mapTools(raw: unknown[]): ToolMap {
  const map: ToolMap = { tools: [], byModelName: new Map(), dropped: [] };
  const add = (t: FunctionToolDef | CustomToolDef, at: string, namespace?: string) => {
    if (typeof t.name !== 'string' || t.name.length === 0)
      throw errors.invalidRequest(`${at}.name must be a non-empty string`, `${at}.name`, 'invalid_type');
    let name = chatName(namespace ? `${namespace}__${t.name}` : t.name);
    for (let n = 2; map.byModelName.has(name); n++) name = `${name.slice(0, 60)}_${n}`;
    const custom = t.type === 'custom';
    map.byModelName.set(name, { name: t.name, custom, ...(namespace ? { namespace } : {}) });
    const fn: FunctionTool['function'] = { name };
    if (custom) {
      fn.description = customDescription(t);
      fn.parameters = {
        type: 'object',
        properties: { [CUSTOM_INPUT]: { type: 'string', description: 'The tool input, as free text.' } },
        required: [CUSTOM_INPUT],
        additionalProperties: false,
      };
    } else {
      const f = t as FunctionToolDef;
      if (typeof f.description === 'string') fn.description = f.description;
      if (isRecord(f.parameters)) fn.parameters = f.parameters;
      if (typeof f.strict === 'boolean') fn.strict = f.strict;
    }
    map.tools.push({ type: 'function', function: fn });
  };
  raw.forEach((t, i) => {
    const at = `tools[${i}]`;
    if (!isRecord(t) || typeof t.type !== 'string')
      throw errors.invalidRequest(`${at} must be an object with a type`, at, 'invalid_type');
    if (!MAPPED_TYPES.has(t.type)) {
      map.dropped.push(`tools[${t.type}]`);
      return;
    }
    if (t.type !== 'namespace') return add(t as unknown as FunctionToolDef | CustomToolDef, at);
    const ns = t as unknown as NamespaceToolDef;
    if (typeof ns.name !== 'string' || ns.name.length === 0 || !Array.isArray(ns.tools))
      throw errors.invalidRequest(`${at}: a namespace tool needs a name and a list of tools`, at, 'invalid_type');
    ns.tools.forEach((inner: unknown, k) => {
      const innerAt = `${at}.tools[${k}]`;
      if (!isRecord(inner) || (inner.type !== 'function' && inner.type !== 'custom')) {
        map.dropped.push(`tools[${ns.name}.${isRecord(inner) ? String(inner.type) : '?'}]`);
        return;
      }
      add(inner as unknown as FunctionToolDef | CustomToolDef, innerAt, ns.name);
    });
  });
  return map;
}

/** The name the model knows a declared tool by (the flattened one for a namespace's tool). */
export function modelName(map: ToolMap, name: string, namespace?: string | null): string {
  for (const [flat, d] of map.byModelName)
    if (d.name === name && (d.namespace ?? null) === (namespace ?? null)) return flat;
  return namespace ? chatName(`${namespace}__${name}`) : name;
}

/**
 * `tool_choice` in chat terms. A choice the gateway cannot honour as given (a hosted tool, `allowed_tools`) is
 * loosened to `auto`/`required` and named in `dropped`.
 */
export function mapToolChoice(c: ResponsesToolChoice, map: ToolMap, dropped: string[]): ToolChoice | undefined {
  if (c === 'none' || c === 'auto' || c === 'required') return c;
  if (isRecord(c) && (c.type === 'function' || c.type === 'custom') && typeof c.name === 'string') {
    const ns = typeof c.namespace === 'string' ? c.namespace : undefined;
    return { type: 'function', function: { name: modelName(map, c.name, ns) } };
  }
  if (isRecord(c) && c.type === 'allowed_tools') {
    dropped.push('tool_choice.allowed_tools');
    return c.mode === 'required' ? 'required' : 'auto';
  }
  if (isRecord(c) && typeof c.type === 'string') {
    dropped.push(`tool_choice[${c.type}]`);
    return undefined;
  }
  throw errors.invalidRequest(
    'tool_choice must be none, auto, required or {type: function, name}',
    'tool_choice',
    'invalid_value',
  );
}

/** A custom tool's input from the arguments the model gave its function (the raw text when they are not JSON). */
export function customInput(args: string): string {
  try {
    const v: unknown = JSON.parse(args);
    if (isRecord(v) && typeof v[CUSTOM_INPUT] === 'string') return v[CUSTOM_INPUT];
    if (typeof v === 'string') return v;
  } catch {
    // not JSON: the model wrote the input itself
  }
  return args;
}
