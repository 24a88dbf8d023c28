import { errors, upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatCompletion, ChatCompletionChunk, ChatMessage, ChatRequest, ContentPart, FinishReason, ToolCall, Usage } from '../../types/openai';
import { joinUrl } from '../shared/http';
import { chunk, completion, dataUrl, isRecord, mergeConsecutive, parseArgs, parseEventJson, reasoningChunk, textOf, ToolIndexes, usage, usageChunk } from '../shared';
import { cacheControlOf, detailsOf, reasoningAsk, thinkingBudget } from '../reasoning';
import type { ReasoningDetail } from '../../types/openai';
import type { AdapterContext, HttpProviderAdapter, StreamTranslator, UpstreamEvent, UpstreamRequest, UpstreamTarget } from '../types';
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
      const d = p.type === 'image_url' ? dataUrl((p as { image_url: { url: string } }).image_url.url) : null;
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
    if (d.type === 'reasoning.text') return [{ reasoningContent: { reasoningText: { text: d.text ?? '', ...(typeof d.signature === 'string' ? { signature: d.signature } : {}) } } }];
    if (d.type === 'reasoning.encrypted' && typeof d.data === 'string') return [{ reasoningContent: { redactedContent: d.data } }];
    return [];
  });
}

function message(m: ChatMessage): { role: string; content: Block[] } {
  const cache = cacheControlOf(m);
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((t) => ({ toolUse: { toolUseId: t.id, name: t.function.name, input: parseArgs(t.function.arguments) } }));
    return { role: 'assistant', content: [...reasoningBlocks(m), ...blocks(m.content, cache), ...calls] };
  }
  if (m.role === 'tool' || m.role === 'function') {
    return { role: 'user', content: [{ toolResult: { toolUseId: m.tool_call_id ?? m.name ?? '', content: [{ text: textOf(m.content) }] } }, ...(cache ? [CACHE_POINT] : [])] };
  }
  return { role: 'user', content: blocks(m.content, cache) };
}

/**
 * reasoning_effort / reasoning -> the model's own request fields: Claude's `thinking`
 * (budget_tokens), Nova's `reasoningConfig`, else `reasoning_effort` (gpt-oss and others).
 */
function reasoningFields(req: ChatRequest, model: string, inf: Record<string, unknown>): Record<string, unknown> | undefined {
  const ask = reasoningAsk(req);
  if (!ask) return undefined;
  if (/anthropic|claude/.test(model)) {
    if (!ask.enabled) return { thinking: { type: 'disabled' } };
    const max = typeof inf.maxTokens === 'number' ? inf.maxTokens : 4096;
    const budget = thinkingBudget(ask, max);
    inf.maxTokens = max <= budget ? budget + max : max;
    delete inf.temperature;
    if (typeof inf.topP === 'number' && inf.topP < 0.95) delete inf.topP;
    return { thinking: { type: 'enabled', budget_tokens: budget } };
  }
  const effort = ask.effort === 'minimal' ? 'low' : ask.effort === 'xhigh' ? 'high' : ask.effort ?? 'medium';
  if (/nova/.test(model)) return ask.enabled ? { reasoningConfig: { type: 'enabled', maxReasoningEffort: effort } } : { reasoningConfig: { type: 'disabled' } };
  return ask.enabled ? { reasoning_effort: effort } : undefined;
}

/** OpenAI chat request -> Bedrock Converse request. */
export function converseBody(req: ChatRequest, model = ''): Record<string, unknown> {
  const system = req.messages.filter((m) => m.role === 'system' || m.role === 'developer').flatMap((m) => blocks(m.content, cacheControlOf(m)));
  const body: Record<string, unknown> = { messages: mergeConsecutive(req.messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map(message)) };
  if (system.length) body.system = system;
  const inf: Record<string, unknown> = {};
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max !== undefined) inf.maxTokens = max;
  if (req.temperature !== undefined) inf.temperature = req.temperature;
  if (req.top_p !== undefined) inf.topP = req.top_p;
  if (req.stop !== undefined && req.stop !== null) inf.stopSequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  const extra = reasoningFields(req, model, inf);
  if (extra) body.additionalModelRequestFields = extra;
  if (Object.keys(inf).length) body.inferenceConfig = inf;
  if (req.tools?.length && req.tool_choice !== 'none') {
    const tc = req.tool_choice;
    body.toolConfig = {
      tools: req.tools.flatMap((t) => [
        { toolSpec: { name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), inputSchema: { json: t.function.parameters ?? { type: 'object', properties: {} } } } },
        ...(cacheControlOf(t as unknown as ContentPart) ? [CACHE_POINT] : []),
      ]),
      ...(tc === 'required' ? { toolChoice: { any: {} } } : typeof tc === 'object' && tc ? { toolChoice: { tool: { name: tc.function.name } } } : tc === 'auto' ? { toolChoice: { auto: {} } } : {}),
    };
  }
  return body;
}

/** Credentials from provider options (access_key_id, secret_access_key, session_token) or api_key "ACCESS_KEY_ID:SECRET_ACCESS_KEY". */
export function credentials(target: UpstreamTarget): AwsCredentials {
  const o = { ...target.provider.options };
  if (typeof o.access_key_id === 'string' && typeof o.secret_access_key === 'string') {
    return { accessKeyId: o.access_key_id, secretAccessKey: o.secret_access_key, ...(typeof o.session_token === 'string' ? { sessionToken: o.session_token } : {}) };
  }
  const [accessKeyId = '', secretAccessKey = ''] = (target.provider.api_key ?? '').split(':');
  return { accessKeyId, secretAccessKey };
}

function buildBedrockRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const region = String({ ...target.provider.options }.region ?? 'us-east-1');
  const base = target.provider.api_base ?? `https://bedrock-runtime.${region}.amazonaws.com`;
  const url = joinUrl(base, `/model/${encodeURIComponent(target.deployment.model)}/${stream ? 'converse-stream' : 'converse'}`);
  const body = JSON.stringify(converseBody(req, target.deployment.model));
  const headers = signV4({
    method: 'POST', url, body, region, service: 'bedrock', credentials: credentials(target),
    headers: { 'content-type': 'application/json', accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json', ...target.provider.headers, ...target.extraHeaders },
  });
  return { url, method: 'POST', headers, body };
}

const FINISH: Record<string, FinishReason> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_calls', guardrail_intervened: 'content_filter', content_filtered: 'content_filter' };

/** Converse's inputTokens excludes cache reads and writes; prompt_tokens counts all three. */
function bedrockUsage(u: unknown): Usage {
  const n = (k: string) => (isRecord(u) && typeof u[k] === 'number' ? (u[k] as number) : 0);
  return usage(n('inputTokens') + n('cacheReadInputTokens') + n('cacheWriteInputTokens'), n('outputTokens'), n('cacheReadInputTokens'), undefined, n('cacheWriteInputTokens'));
}

/** The format name reasoning_details carry for Converse reasoning blocks. */
const BEDROCK_FORMAT = 'bedrock-converse-v1';

function reasoningDetail(rc: Record<string, unknown>, index: number): ReasoningDetail | undefined {
  if (isRecord(rc.reasoningText)) {
    const r = rc.reasoningText;
    return { type: 'reasoning.text', text: String(r.text ?? ''), signature: typeof r.signature === 'string' ? r.signature : null, format: BEDROCK_FORMAT, index };
  }
  if (typeof rc.redactedContent === 'string') return { type: 'reasoning.encrypted', data: rc.redactedContent, format: BEDROCK_FORMAT, index };
  return undefined;
}

function parseBedrockResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  const msg = isRecord(body) && isRecord(body.output) && isRecord(body.output.message) ? body.output.message : undefined;
  if (!msg || !Array.isArray(msg.content)) throw errors.upstreamProtocol(ctx.provider ?? 'bedrock', 'no output message in the answer');
  let text = '';
  let thinking = '';
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  for (const b of msg.content as Block[]) {
    if (typeof b.text === 'string') text += b.text;
    const rd = isRecord(b.reasoningContent) ? reasoningDetail(b.reasoningContent, details.length) : undefined;
    if (rd) {
      details.push(rd);
      thinking += rd.text ?? '';
    }
    if (isRecord(b.toolUse)) calls.push({ id: String(b.toolUse.toolUseId), type: 'function', function: { name: String(b.toolUse.name), arguments: JSON.stringify(b.toolUse.input ?? {}) } });
  }
  return completion(ctx, calls.length && !text ? null : text, calls, FINISH[String((body as Block).stopReason)] ?? 'stop', bedrockUsage((body as Block).usage), { text: thinking, details });
}

const EXCEPTION_STATUS: Record<string, number> = { throttlingException: 429, validationException: 400, modelStreamErrorException: 502, internalServerException: 500, serviceUnavailableException: 503, modelTimeoutException: 504, accessDeniedException: 403 };

function bedrockError(provider: string, status: number, body: unknown, type?: string): GatewayError {
  const message = isRecord(body) && typeof (body.message ?? body.Message) === 'string' ? String(body.message ?? body.Message) : typeof body === 'string' ? body.slice(0, 300) : type ?? '';
  const code = /too long|too many (input )?tokens|context length/i.test(message) ? 'context_length_exceeded' : undefined;
  return upstreamStatusError(provider, status, message, code);
}

/** ConverseStream events (AWS event-stream framing) -> OpenAI chunks. */
function createBedrockTranslator(ctx: AdapterContext): StreamTranslator {
  let done = false;
  let stopped = false;
  const tools = new ToolIndexes();
  const reasoning = new ToolIndexes(); // content block index -> reasoning_details index
  return {
    get done() {
      return done;
    },
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = (ev.data ? parseEventJson(ev, ctx.provider ?? 'bedrock') : {}) as Block;
      const name = ev.event ?? '';
      if (name.startsWith('exception:')) {
        const type = name.slice('exception:'.length);
        throw bedrockError(ctx.provider ?? 'bedrock', EXCEPTION_STATUS[type] ?? 500, d, type);
      }
      switch (name) {
        case 'messageStart':
          return [chunk(ctx, { role: 'assistant', content: '' })];
        case 'contentBlockStart': {
          const tu = isRecord(d.start) && isRecord(d.start.toolUse) ? d.start.toolUse : undefined;
          if (!tu) return [];
          const i = tools.open(Number(d.contentBlockIndex));
          return [chunk(ctx, { tool_calls: [{ index: i, id: String(tu.toolUseId), type: 'function', function: { name: String(tu.name), arguments: '' } }] })];
        }
        case 'contentBlockDelta': {
          const delta = isRecord(d.delta) ? d.delta : {};
          if (typeof delta.text === 'string') return [chunk(ctx, { content: delta.text })];
          if (isRecord(delta.reasoningContent)) {
            const block = Number(d.contentBlockIndex);
            const i = reasoning.get(block) ?? reasoning.open(block);
            const rc = delta.reasoningContent;
            if (typeof rc.text === 'string') return reasoningChunk(ctx, rc.text, [{ type: 'reasoning.text', text: rc.text, format: BEDROCK_FORMAT, index: i }]);
            if (typeof rc.signature === 'string') return reasoningChunk(ctx, '', [{ type: 'reasoning.text', text: '', signature: rc.signature, format: BEDROCK_FORMAT, index: i }]);
            if (typeof rc.redactedContent === 'string') return reasoningChunk(ctx, '', [{ type: 'reasoning.encrypted', data: rc.redactedContent, format: BEDROCK_FORMAT, index: i }]);
          }
          if (isRecord(delta.toolUse)) {
            const i = tools.get(Number(d.contentBlockIndex));
            return i === undefined ? [] : [chunk(ctx, { tool_calls: [{ index: i, function: { arguments: String(delta.toolUse.input ?? '') } }] })];
          }
          return [];
        }
        case 'messageStop':
          stopped = true;
          return [chunk(ctx, {}, FINISH[String(d.stopReason)] ?? 'stop')];
        case 'metadata':
          done = stopped;
          return [usageChunk(ctx, bedrockUsage(d.usage))];
        default:
          return [];
      }
    },
    finish: () => [],
  };
}

/** AWS Bedrock Converse / ConverseStream, SigV4-signed. */
export const bedrockAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'bedrock',
  supportedParams: ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'tools', 'tool_choice', 'reasoning_effort', 'reasoning', 'stream', 'stream_options'],
  streamFormat: 'aws-eventstream',
  buildRequest: buildBedrockRequest,
  parseResponse: parseBedrockResponse,
  createStreamTranslator: createBedrockTranslator,
  mapError: (status, body, headers, provider) => bedrockError(provider, status, body, String(headers['x-amzn-errortype'] ?? '')),
};
