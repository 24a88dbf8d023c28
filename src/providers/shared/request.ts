import type { ChatMessage, ChatRequest, ContentPart, FunctionTool } from '../../types/openai';

/** Request-side pieces several adapters share: roles, stop lists, output limits, tools, schemas. */

/** System and developer messages (the providers that take the system prompt apart). */
export function isSystem(m: ChatMessage): boolean {
  return m.role === 'system' || m.role === 'developer';
}

/** The role under the names OpenAI-like providers know: developer is system, function is tool. */
export function plainRole(role: ChatMessage['role']): string {
  return role === 'developer' ? 'system' : role === 'function' ? 'tool' : role;
}

/** `stop` as a list (a single string becomes one stop sequence). */
export function stopList(stop: unknown): string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  return Array.isArray(stop) ? (stop as string[]) : [stop as string];
}

/** The output limit the client asked for: max_completion_tokens, else max_tokens. */
export function maxOutput(req: ChatRequest): number | undefined {
  return req.max_completion_tokens ?? req.max_tokens;
}

/** The JSON schema of a `json_schema` response_format (undefined for any other format). */
export function responseSchema(req: ChatRequest): unknown {
  const rf = req.response_format;
  return rf?.type === 'json_schema' ? (rf.json_schema as { schema?: unknown } | undefined)?.schema : undefined;
}

/** A tool's name and, when it has one, its description (each provider adds its schema field). */
export function toolHead(t: FunctionTool): { name: string; description?: string } {
  return { name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}) };
}

/** A tool's parameters schema; a tool without one takes an empty object. */
export function toolParameters(t: FunctionTool): Record<string, unknown> {
  return t.function.parameters ?? { type: 'object', properties: {} };
}

/** The function a tool_choice forces, if it forces one. */
export function forcedTool(req: ChatRequest): string | undefined {
  const tc = req.tool_choice;
  return typeof tc === 'object' && tc ? tc.function.name : undefined;
}

/** The URL of an image_url part. */
export function imageUrl(p: ContentPart): string {
  return (p as { image_url: { url: string } }).image_url.url;
}
