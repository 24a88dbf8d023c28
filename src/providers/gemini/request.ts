import type { ChatMessage, ChatRequest, ContentPart } from '../../types/openai';
import { joinUrl, upstreamHeaders } from '../shared/http';
import { dataUrl, mergeConsecutive, parseArgs, textOf } from '../shared';
import { detailsOf, reasoningAsk, thinkingBudget } from '../reasoning';
import type { UpstreamRequest, UpstreamTarget } from '../types';
import { cleanSchema } from './schema';

type Part = Record<string, unknown>;

function parts(content: string | ContentPart[] | null): Part[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap((p): Part[] => {
    if (p.type === 'text') return [{ text: String(p.text) }];
    if (p.type === 'image_url') {
      const url = (p as { image_url: { url: string } }).image_url.url;
      const d = dataUrl(url);
      return [d ? { inlineData: { mimeType: d.mediaType, data: d.data } } : { fileData: { fileUri: url } }];
    }
    return [];
  });
}

/** The format name OpenRouter gives Gemini's thought signatures in reasoning_details. */
export const GEMINI_FORMAT = 'google-gemini-v1';

/**
 * An earlier model turn, with its thought signatures put back where Gemini gave them: on
 * the function call with the same tool-call id, or (no id) on the turn's first other part.
 */
function modelParts(m: ChatMessage, names: Map<string, string>): Part[] {
  const sigs = new Map<string | null, string>();
  for (const d of detailsOf(m)) {
    if (d.type === 'reasoning.encrypted' && typeof d.data === 'string' && (d.format === undefined || d.format.startsWith('google'))) sigs.set(d.id ?? null, d.data);
  }
  const out: Part[] = parts(m.content);
  const loose = sigs.get(null);
  if (loose && out.length > 0) out[0] = { ...out[0], thoughtSignature: loose };
  for (const t of m.tool_calls ?? []) {
    names.set(t.id, t.function.name);
    const sig = sigs.get(t.id);
    out.push({ functionCall: { name: t.function.name, args: parseArgs(t.function.arguments) }, ...(sig ? { thoughtSignature: sig } : {}) });
  }
  return out;
}

/** reasoning_effort / reasoning -> thinkingConfig: thinkingLevel on Gemini 3, thinkingBudget before it. */
function thinkingConfig(req: ChatRequest, model: string, maxOutput: number | undefined): Record<string, unknown> | undefined {
  const ask = reasoningAsk(req);
  if (!ask) return undefined;
  const includeThoughts = ask.enabled && !ask.exclude;
  if (/gemini-3/.test(model)) {
    const level = !ask.enabled || ask.effort === 'low' || ask.effort === 'minimal' ? 'low' : 'high';
    return { thinkingLevel: level, includeThoughts };
  }
  return { thinkingBudget: ask.enabled ? thinkingBudget(ask, maxOutput ?? 8192) : 0, includeThoughts };
}

/** OpenAI chat request -> Gemini generateContent request. */
export function geminiBody(req: ChatRequest, model = ''): Record<string, unknown> {
  const names = new Map<string, string>(); // tool_call_id -> function name (functionResponse needs the name)
  const system = req.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)).join('\n\n');
  const contents = mergeConsecutive(
    req.messages
      .filter((m) => m.role !== 'system' && m.role !== 'developer')
      .map((m: ChatMessage) => {
        if (m.role === 'assistant') return { role: 'model', content: modelParts(m, names) };
        if (m.role === 'tool' || m.role === 'function') {
          const name = m.name ?? names.get(m.tool_call_id ?? '') ?? 'tool';
          return { role: 'user', content: [{ functionResponse: { name, response: { content: textOf(m.content) } } }] };
        }
        return { role: 'user', content: parts(m.content) };
      }),
  ).map((c) => ({ role: c.role, parts: c.content }));

  const g: Record<string, unknown> = {};
  if (req.temperature !== undefined) g.temperature = req.temperature;
  if (req.top_p !== undefined) g.topP = req.top_p;
  if (req.top_k !== undefined) g.topK = req.top_k;
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max !== undefined) g.maxOutputTokens = max;
  if (req.stop !== undefined && req.stop !== null) g.stopSequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  if (req.n !== undefined) g.candidateCount = req.n;
  if (req.seed !== undefined) g.seed = req.seed;
  if (req.presence_penalty !== undefined) g.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) g.frequencyPenalty = req.frequency_penalty;
  if (req.logprobs) {
    g.responseLogprobs = true;
    if (req.top_logprobs !== undefined) g.logprobs = req.top_logprobs;
  }
  const thinking = thinkingConfig(req, model, max);
  if (thinking) g.thinkingConfig = thinking;
  const rf = req.response_format;
  if (rf?.type === 'json_object') g.responseMimeType = 'application/json';
  if (rf?.type === 'json_schema') {
    g.responseMimeType = 'application/json';
    const schema = (rf.json_schema as { schema?: unknown } | undefined)?.schema;
    if (schema) g.responseSchema = cleanSchema(schema);
  }
  const body: Record<string, unknown> = { contents };
  if (system) body.systemInstruction = { parts: [{ text: system }] };
  if (Object.keys(g).length > 0) body.generationConfig = g;
  if (req.tools?.length) {
    body.tools = [{ functionDeclarations: req.tools.map((t) => ({ name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), ...(t.function.parameters ? { parameters: cleanSchema(t.function.parameters) } : {}) })) }];
    const tc = req.tool_choice;
    const mode = tc === 'none' ? 'NONE' : tc === 'required' || (typeof tc === 'object' && tc) ? 'ANY' : 'AUTO';
    body.toolConfig = { functionCallingConfig: { mode, ...(typeof tc === 'object' && tc ? { allowedFunctionNames: [tc.function.name] } : {}) } };
  }
  return body;
}

export function buildGeminiRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const base = target.provider.api_base ?? 'https://generativelanguage.googleapis.com';
  const model = encodeURIComponent(target.deployment.model);
  return {
    url: joinUrl(base, stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`),
    method: 'POST',
    headers: upstreamHeaders(target, { 'x-goog-api-key': target.provider.api_key ?? '' }),
    body: JSON.stringify(geminiBody(req, target.deployment.model)),
  };
}
