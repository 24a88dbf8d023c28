import { errors, upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatCompletion, ChatCompletionChunk, ChatMessage, ChatRequest, ContentPart, FinishReason, ToolCall, Usage } from '../../types/openai';
import { joinUrl } from '../openai/request';
import { chunk, completion, dataUrl, isRecord, mergeConsecutive, parseArgs, parseEventJson, textOf, ToolIndexes, usage, usageChunk } from '../shared';
import type { AdapterContext, HttpProviderAdapter, StreamTranslator, UpstreamEvent, UpstreamRequest, UpstreamTarget } from '../types';
import { signV4, type AwsCredentials } from './sigv4';

type Block = Record<string, unknown>;

function blocks(content: string | ContentPart[] | null): Block[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap((p): Block[] => {
    if (p.type === 'text') return [{ text: String(p.text) }];
    const d = p.type === 'image_url' ? dataUrl((p as { image_url: { url: string } }).image_url.url) : null;
    return d ? [{ image: { format: d.mediaType.replace('image/', ''), source: { bytes: d.data } } }] : [];
  });
}

function message(m: ChatMessage): { role: string; content: Block[] } {
  if (m.role === 'assistant') {
    return { role: 'assistant', content: [...blocks(m.content), ...(m.tool_calls ?? []).map((t) => ({ toolUse: { toolUseId: t.id, name: t.function.name, input: parseArgs(t.function.arguments) } }))] };
  }
  if (m.role === 'tool' || m.role === 'function') return { role: 'user', content: [{ toolResult: { toolUseId: m.tool_call_id ?? m.name ?? '', content: [{ text: textOf(m.content) }] } }] };
  return { role: 'user', content: blocks(m.content) };
}

/** OpenAI chat request -> Bedrock Converse request. */
export function converseBody(req: ChatRequest): Record<string, unknown> {
  const system = req.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => ({ text: textOf(m.content) }));
  const body: Record<string, unknown> = { messages: mergeConsecutive(req.messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map(message)) };
  if (system.length) body.system = system;
  const inf: Record<string, unknown> = {};
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max !== undefined) inf.maxTokens = max;
  if (req.temperature !== undefined) inf.temperature = req.temperature;
  if (req.top_p !== undefined) inf.topP = req.top_p;
  if (req.stop !== undefined && req.stop !== null) inf.stopSequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  if (Object.keys(inf).length) body.inferenceConfig = inf;
  if (req.tools?.length && req.tool_choice !== 'none') {
    const tc = req.tool_choice;
    body.toolConfig = {
      tools: req.tools.map((t) => ({ toolSpec: { name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), inputSchema: { json: t.function.parameters ?? { type: 'object', properties: {} } } } })),
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
  const body = JSON.stringify(converseBody(req));
  const headers = signV4({
    method: 'POST', url, body, region, service: 'bedrock', credentials: credentials(target),
    headers: { 'content-type': 'application/json', accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json', ...target.provider.headers, ...target.extraHeaders },
  });
  return { url, method: 'POST', headers, body };
}

const FINISH: Record<string, FinishReason> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_calls', guardrail_intervened: 'content_filter', content_filtered: 'content_filter' };

function bedrockUsage(u: unknown): Usage {
  const n = (k: string) => (isRecord(u) && typeof u[k] === 'number' ? (u[k] as number) : 0);
  return usage(n('inputTokens') + n('cacheReadInputTokens'), n('outputTokens'), n('cacheReadInputTokens'));
}

function parseBedrockResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  const msg = isRecord(body) && isRecord(body.output) && isRecord(body.output.message) ? body.output.message : undefined;
  if (!msg || !Array.isArray(msg.content)) throw errors.upstreamProtocol('bedrock', 'no output message in the answer');
  let text = '';
  const calls: ToolCall[] = [];
  for (const b of msg.content as Block[]) {
    if (typeof b.text === 'string') text += b.text;
    if (isRecord(b.toolUse)) calls.push({ id: String(b.toolUse.toolUseId), type: 'function', function: { name: String(b.toolUse.name), arguments: JSON.stringify(b.toolUse.input ?? {}) } });
  }
  return completion(ctx, calls.length && !text ? null : text, calls, FINISH[String((body as Block).stopReason)] ?? 'stop', bedrockUsage((body as Block).usage));
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
  return {
    get done() {
      return done;
    },
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = (ev.data ? parseEventJson(ev, 'bedrock') : {}) as Block;
      const name = ev.event ?? '';
      if (name.startsWith('exception:')) {
        const type = name.slice('exception:'.length);
        throw bedrockError('bedrock', EXCEPTION_STATUS[type] ?? 500, d, type);
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
  supportedParams: ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'tools', 'tool_choice', 'stream', 'stream_options'],
  streamFormat: 'aws-eventstream',
  buildRequest: buildBedrockRequest,
  parseResponse: parseBedrockResponse,
  createStreamTranslator: createBedrockTranslator,
  mapError: (status, body, headers, provider) => bedrockError(provider, status, body, String(headers['x-amzn-errortype'] ?? '')),
};
