import type { ServerResponse } from 'node:http';
import { MockUpstream, sendJson, writeSse, type RecordedRequest } from '../../helpers/mock-upstream';
import { converseAnswer } from '../../helpers/bedrock-fixtures';
import {
  anthropicEvent as ev,
  anthropicMessage,
  messageEnd,
  messageStart,
  textBlock,
} from '../../helpers/anthropic-sse';

type Block = Record<string, unknown>;

const bytes = (s: unknown) => (typeof s === 'string' ? Buffer.byteLength(s, 'utf8') : 0);

/** Text bytes of an Anthropic or Bedrock content list (or string): one token per byte at worst. */
function contentBytes(c: unknown): number {
  if (typeof c === 'string') return bytes(c);
  if (!Array.isArray(c)) return 0;
  let n = 0;
  for (const b of c as Block[]) {
    n += bytes(b.text);
    if (b.toolResult || b.tool_use || b.toolUse || b.input) n += bytes(JSON.stringify(b));
  }
  return n;
}

/** How an honest provider may split its prompt count: all plain input, all cache writes, or all cache reads. */
export type CacheMode = 'none' | 'write' | 'read';

/**
 * The most an honest Claude can count for a request: one token per UTF-8 byte of text, 3
 * per message and 3 to prime the reply, tool schemas at their JSON size; and the whole
 * output allowance the request gave it (max_tokens / inferenceConfig.maxTokens: thinking included).
 */
export function worstClaudeCount(body: Record<string, unknown>): { input: number; output: number } {
  let input = 3 + contentBytes(body.system);
  for (const m of (body.messages ?? []) as Block[]) input += 3 + contentBytes(m.content);
  if (body.tools) input += bytes(JSON.stringify(body.tools));
  if (body.toolConfig) input += bytes(JSON.stringify(body.toolConfig));
  const inf = (body.inferenceConfig ?? {}) as { maxTokens?: number };
  return { input, output: Number(body.max_tokens ?? inf.maxTokens ?? 4096) };
}

const modeOf = (model: string): CacheMode =>
  model.includes('cache-write') ? 'write' : model.includes('cache-read') ? 'read' : 'none';

function anthropicUsage(input: number, mode: CacheMode) {
  return {
    input_tokens: mode === 'none' ? input : 0,
    cache_creation_input_tokens: mode === 'write' ? input : 0,
    cache_read_input_tokens: mode === 'read' ? input : 0,
  };
}

function anthropicAnswer(res: ServerResponse, body: Record<string, unknown>): Promise<void> | void {
  const { input, output } = worstClaudeCount(body);
  const usage = anthropicUsage(input, modeOf(String(body.model)));
  const thinking = body.thinking !== undefined && (body.thinking as { type?: string }).type === 'enabled';
  if (body.stream === true) {
    const blocks = thinking
      ? [
          ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'let me think' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
          ev('content_block_stop', { index: 0 }),
        ]
      : [];
    const i = blocks.length > 0 ? 1 : 0;
    return writeSse(
      res,
      [messageStart(usage, String(body.model)), ...blocks, ...textBlock(i, 'ok'), ...messageEnd('max_tokens', output)],
      { named: true },
    );
  }
  const content = [
    ...(thinking ? [{ type: 'thinking', thinking: 'let me think', signature: 'sig' }] : []),
    { type: 'text', text: 'ok' },
  ];
  sendJson(
    res,
    200,
    anthropicMessage(
      content,
      { ...usage, output_tokens: output },
      { stopReason: 'max_tokens', model: String(body.model), id: 'msg_1' },
    ),
  );
}

function bedrockAnswer(res: ServerResponse, path: string, body: Record<string, unknown>): void {
  const { input, output } = worstClaudeCount(body);
  const mode = modeOf(decodeURIComponent(path));
  const usage = {
    inputTokens: mode === 'none' ? input : 0,
    cacheWriteInputTokens: mode === 'write' ? input : 0,
    cacheReadInputTokens: mode === 'read' ? input : 0,
    outputTokens: output,
    totalTokens: input + output,
  };
  sendJson(
    res,
    200,
    converseAnswer(
      [{ reasoningContent: { reasoningText: { text: 'hmm', signature: 's' } } }, { text: 'ok' }],
      'max_tokens',
      usage,
      { metrics: { latencyMs: 1 } },
    ),
  );
}

/**
 * A Claude upstream speaking Anthropic Messages (`/v1/messages`) and Bedrock Converse
 * (`/model/{id}/converse`) that counts honestly at the worst the rules allow and always
 * uses the whole output allowance it was given. A model or model id containing
 * `cache-write` / `cache-read` reports the whole prompt as cache writes / reads.
 */
export function honestClaude(): MockUpstream {
  const up = new MockUpstream();
  up.handler = (req: RecordedRequest, res) => {
    const body = (req.json ?? {}) as Record<string, unknown>;
    if (req.path.includes('/converse')) return bedrockAnswer(res, req.path, body);
    return anthropicAnswer(res, body);
  };
  return up;
}
