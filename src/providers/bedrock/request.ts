import type { ChatMessage, ChatRequest, ContentPart } from '../../types/openai';
import { dataUrl, mergeConsecutive, parseArgs, textOf } from '../shared';
import { joinUrl } from '../shared/http';
import { applyParams } from '../shared/params';
import { forcedTool, imageUrl, isSystem, toolHead, toolParameters } from '../shared/request';
import {
  cacheControlOf,
  detailsOf,
  reasoningAsk,
  thinkingMaxTokens,
  thinkingBudget,
  threeLevelEffort,
} from '../reasoning';
import type { UpstreamRequest, UpstreamTarget } from '../types';
import { BEDROCK_TABLE } from './params';
import { signV4, type AwsCredentials } from './sigv4';

type Block = Record<string, unknown>;

/** A cache checkpoint: everything before it in the prompt is cached (Anthropic's cache_control, in Converse's form). */
const CACHE_POINT: Block = { cachePoint: { type: 'default' } };

/** Content parts -> Converse blocks; a part's (or the message's) cache_control becomes a cachePoint after it. */
function blocks(content: string | ContentPart[] | null, messageCache?: Record<string, unknown>): Block[] {
  const out: Block[] = [];
  if (typeof content === 'string') {
    if (content) out.push({ text: content });
  } else if (Array.isArray(content)) {
    for (const p of content) {
      const d = p.type === 'image_url' ? dataUrl(imageUrl(p)) : null;
      if (p.type === 'text') out.push({ text: String(p.text) });
      else if (d) out.push({ image: { format: d.mediaType.replace('image/', ''), source: { bytes: d.data } } });
      else continue;
      if (cacheControlOf(p)) out.push(CACHE_POINT);
    }
  }
  if (messageCache && out.length > 0 && out[out.length - 1] !== CACHE_POINT) out.push(CACHE_POINT);
  return out;
}

/** Reasoning blocks of an earlier turn, text and signature unchanged (Converse refuses a tampered one). */
function reasoningBlocks(m: ChatMessage): Block[] {
  return detailsOf(m).flatMap((d): Block[] => {
    if (d.format !== undefined && !/^(anthropic|bedrock)/.test(d.format)) return [];
    if (d.type === 'reasoning.text') {
      const signature = typeof d.signature === 'string' ? { signature: d.signature } : {};
      return [{ reasoningContent: { reasoningText: { text: d.text ?? '', ...signature } } }];
    }
    if (d.type === 'reasoning.encrypted' && typeof d.data === 'string')
      return [{ reasoningContent: { redactedContent: d.data } }];
    return [];
  });
}

function message(m: ChatMessage): { role: string; content: Block[] } {
  const cache = cacheControlOf(m);
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((t) => ({
      toolUse: { toolUseId: t.id, name: t.function.name, input: parseArgs(t.function.arguments) },
    }));
    return { role: 'assistant', content: [...reasoningBlocks(m), ...blocks(m.content, cache), ...calls] };
  }
  if (m.role === 'tool' || m.role === 'function') {
    const toolResult = { toolUseId: m.tool_call_id ?? m.name ?? '', content: [{ text: textOf(m.content) }] };
    return { role: 'user', content: [{ toolResult }, ...(cache ? [CACHE_POINT] : [])] };
  }
  return { role: 'user', content: blocks(m.content, cache) };
}

/**
 * reasoning_effort / reasoning -> the model's own request fields: Claude's `thinking`
 * (budget_tokens), Nova's `reasoningConfig`, else `reasoning_effort` (gpt-oss and others).
 */
function reasoningFields(
  req: ChatRequest,
  model: string,
  inf: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const ask = reasoningAsk(req);
  if (!ask) return undefined;
  if (/anthropic|claude/.test(model)) {
    if (!ask.enabled) return { thinking: { type: 'disabled' } };
    const max = typeof inf.maxTokens === 'number' ? inf.maxTokens : 4096;
    const budget = thinkingBudget(ask, max);
    inf.maxTokens = thinkingMaxTokens(max, budget);
    delete inf.temperature;
    if (typeof inf.topP === 'number' && inf.topP < 0.95) delete inf.topP;
    return { thinking: { type: 'enabled', budget_tokens: budget } };
  }
  const effort = threeLevelEffort(ask);
  if (/nova/.test(model)) {
    const reasoningConfig = ask.enabled ? { type: 'enabled', maxReasoningEffort: effort } : { type: 'disabled' };
    return { reasoningConfig };
  }
  return ask.enabled ? { reasoning_effort: effort } : undefined;
}

/** tool_choice -> Converse's toolChoice (none: no toolConfig at all). */
function toolChoiceOf(req: ChatRequest): Block {
  const forced = forcedTool(req);
  if (req.tool_choice === 'required') return { toolChoice: { any: {} } };
  if (forced !== undefined) return { toolChoice: { tool: { name: forced } } };
  return req.tool_choice === 'auto' ? { toolChoice: { auto: {} } } : {};
}

/** OpenAI chat request -> Bedrock Converse request. */
export function converseBody(req: ChatRequest, model = ''): Record<string, unknown> {
  const system = req.messages.filter(isSystem).flatMap((m) => blocks(m.content, cacheControlOf(m)));
  const messages = mergeConsecutive(req.messages.filter((m) => !isSystem(m)).map(message));
  const body: Record<string, unknown> = { messages };
  if (system.length) body.system = system;
  const inf = applyParams(req, BEDROCK_TABLE, {});
  const extra = reasoningFields(req, model, inf);
  if (extra) body.additionalModelRequestFields = extra;
  if (Object.keys(inf).length) body.inferenceConfig = inf;
  if (req.tools?.length && req.tool_choice !== 'none') {
    const tools = req.tools.flatMap((t) => [
      { toolSpec: { ...toolHead(t), inputSchema: { json: toolParameters(t) } } },
      ...(cacheControlOf(t) ? [CACHE_POINT] : []),
    ]);
    body.toolConfig = { tools, ...toolChoiceOf(req) };
  }
  return body;
}

/**
 * Credentials from provider options (access_key_id, secret_access_key, session_token) or
 * api_key "ACCESS_KEY_ID:SECRET_ACCESS_KEY".
 */
export function credentials(target: UpstreamTarget): AwsCredentials {
  const o = { ...target.provider.options };
  if (typeof o.access_key_id === 'string' && typeof o.secret_access_key === 'string') {
    const session = typeof o.session_token === 'string' ? { sessionToken: o.session_token } : {};
    return { accessKeyId: o.access_key_id, secretAccessKey: o.secret_access_key, ...session };
  }
  const [accessKeyId = '', secretAccessKey = ''] = (target.provider.api_key ?? '').split(':');
  return { accessKeyId, secretAccessKey };
}

/** A SigV4-signed JSON POST to /model/{model}/{operation} on the region's bedrock-runtime endpoint (or api_base). */
export function signedPost(target: UpstreamTarget, operation: string, body: unknown, accept: string): UpstreamRequest {
  const region = String({ ...target.provider.options }.region ?? 'us-east-1');
  const base = target.provider.api_base ?? `https://bedrock-runtime.${region}.amazonaws.com`;
  const url = joinUrl(base, `/model/${encodeURIComponent(target.deployment.model)}/${operation}`);
  const text = JSON.stringify(body);
  const headers = signV4({
    method: 'POST',
    url,
    body: text,
    region,
    service: 'bedrock',
    credentials: credentials(target),
    headers: { 'content-type': 'application/json', accept, ...target.provider.headers, ...target.extraHeaders },
  });
  return { url, method: 'POST', headers, body: text };
}

export function buildBedrockRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const body = converseBody(req, target.deployment.model);
  if (!stream) return signedPost(target, 'converse', body, 'application/json');
  return signedPost(target, 'converse-stream', body, 'application/vnd.amazon.eventstream');
}
