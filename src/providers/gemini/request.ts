import type { ChatMessage, ChatRequest, ContentPart } from '../../types/openai';
import { dataUrl, mergeConsecutive, parseArgs, textOf } from '../shared';
import { postJson } from '../shared/http';
import { applyParams } from '../shared/params';
import { forcedTool, imageUrl, isSystem, maxOutput, responseSchema, toolHead } from '../shared/request';
import { detailsOf, reasoningAsk, thinkingBudget } from '../reasoning';
import type { UpstreamRequest, UpstreamTarget } from '../types';
import { GEMINI_TABLE } from './params';
import { cleanSchema } from './schema';

export const GEMINI_BASE = 'https://generativelanguage.googleapis.com';

/** The format name OpenRouter gives Gemini's thought signatures in reasoning_details. */
export const GEMINI_FORMAT = 'google-gemini-v1';

type Part = Record<string, unknown>;

function part(p: ContentPart): Part[] {
  if (p.type === 'text') return [{ text: String(p.text) }];
  if (p.type !== 'image_url') return [];
  const url = imageUrl(p);
  const d = dataUrl(url);
  return [d ? { inlineData: { mimeType: d.mediaType, data: d.data } } : { fileData: { fileUri: url } }];
}

function parts(content: string | ContentPart[] | null): Part[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return Array.isArray(content) ? content.flatMap(part) : [];
}

/**
 * An earlier model turn, with its thought signatures put back where Gemini gave them: on
 * the function call with the same tool-call id, or (no id) on the turn's first other part.
 */
function modelParts(m: ChatMessage, names: Map<string, string>): Part[] {
  const sigs = new Map<string | null, string>();
  for (const d of detailsOf(m)) {
    const ours = d.format === undefined || d.format.startsWith('google');
    if (d.type === 'reasoning.encrypted' && typeof d.data === 'string' && ours) sigs.set(d.id ?? null, d.data);
  }
  const out: Part[] = parts(m.content);
  const loose = sigs.get(null);
  if (loose && out.length > 0) out[0] = { ...out[0], thoughtSignature: loose };
  for (const t of m.tool_calls ?? []) {
    names.set(t.id, t.function.name);
    const sig = sigs.get(t.id);
    const functionCall = { name: t.function.name, args: parseArgs(t.function.arguments) };
    out.push({ functionCall, ...(sig ? { thoughtSignature: sig } : {}) });
  }
  return out;
}

/** A conversation turn as Gemini content (before turns of the same role are merged). */
function turn(m: ChatMessage, names: Map<string, string>): { role: string; content: Part[] } {
  if (m.role === 'assistant') return { role: 'model', content: modelParts(m, names) };
  if (m.role === 'tool' || m.role === 'function') {
    const name = m.name ?? names.get(m.tool_call_id ?? '') ?? 'tool';
    return { role: 'user', content: [{ functionResponse: { name, response: { content: textOf(m.content) } } }] };
  }
  return { role: 'user', content: parts(m.content) };
}

/** reasoning_effort / reasoning -> thinkingConfig: thinkingLevel on Gemini 3, thinkingBudget before it. */
function thinkingConfig(req: ChatRequest, model: string, max: number | undefined): Record<string, unknown> | undefined {
  const ask = reasoningAsk(req);
  if (!ask) return undefined;
  const includeThoughts = ask.enabled && !ask.exclude;
  if (/gemini-3/.test(model)) {
    const level = !ask.enabled || ask.effort === 'low' || ask.effort === 'minimal' ? 'low' : 'high';
    return { thinkingLevel: level, includeThoughts };
  }
  return { thinkingBudget: ask.enabled ? thinkingBudget(ask, max ?? 8192) : 0, includeThoughts };
}

function generationConfig(req: ChatRequest, model: string): Record<string, unknown> {
  const g = applyParams(req, GEMINI_TABLE, {});
  const thinking = thinkingConfig(req, model, maxOutput(req));
  if (thinking) g.thinkingConfig = thinking;
  const rf = req.response_format;
  if (rf?.type === 'json_object' || rf?.type === 'json_schema') g.responseMimeType = 'application/json';
  const schema = responseSchema(req);
  if (schema) g.responseSchema = cleanSchema(schema);
  return g;
}

/** Tool choices: none, a forced function (ANY with only its name allowed), required (ANY), else AUTO. */
function toolConfig(req: ChatRequest): Record<string, unknown> {
  const tc = req.tool_choice;
  const forced = forcedTool(req);
  const mode = tc === 'none' ? 'NONE' : tc === 'required' || forced !== undefined ? 'ANY' : 'AUTO';
  return { functionCallingConfig: { mode, ...(forced !== undefined ? { allowedFunctionNames: [forced] } : {}) } };
}

/** OpenAI chat request -> Gemini generateContent request. */
export function geminiBody(req: ChatRequest, model = ''): Record<string, unknown> {
  const names = new Map<string, string>(); // tool_call_id -> function name (functionResponse needs the name)
  const system = req.messages
    .filter(isSystem)
    .map((m) => textOf(m.content))
    .join('\n\n');
  const turns = req.messages.filter((m) => !isSystem(m)).map((m) => turn(m, names));
  const contents = mergeConsecutive(turns).map((c) => ({ role: c.role, parts: c.content }));
  const body: Record<string, unknown> = { contents };
  if (system) body.systemInstruction = { parts: [{ text: system }] };
  const g = generationConfig(req, model);
  if (Object.keys(g).length > 0) body.generationConfig = g;
  if (req.tools?.length) {
    const functionDeclarations = req.tools.map((t) => ({
      ...toolHead(t),
      ...(t.function.parameters ? { parameters: cleanSchema(t.function.parameters) } : {}),
    }));
    body.tools = [{ functionDeclarations }];
    body.toolConfig = toolConfig(req);
  }
  return body;
}

export function buildGeminiRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const model = encodeURIComponent(target.deployment.model);
  const path = stream
    ? `/v1beta/models/${model}:streamGenerateContent?alt=sse`
    : `/v1beta/models/${model}:generateContent`;
  const auth = { 'x-goog-api-key': target.provider.api_key ?? '' };
  return postJson(target, GEMINI_BASE, path, auth, geminiBody(req, target.deployment.model));
}
