import type { ChatCompletionChunk } from '../../types/openai';
import { chunk, isRecord, parseEventJson, reasoningChunk, ToolIndexes, usageChunk } from '../shared';
import { encryptedDetail, roleChunk, textDetail, toolArgsChunk, toolStartChunk } from '../shared/answer';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { bedrockError, EXCEPTION_STATUS } from './errors';
import { BEDROCK_FORMAT, bedrockUsage, finishOf } from './response';

type Block = Record<string, unknown>;

/** ConverseStream events (AWS event-stream framing) -> OpenAI chunks. */
export function createBedrockTranslator(ctx: AdapterContext): StreamTranslator {
  let stopped = false;
  const tools = new ToolIndexes();
  const reasoning = new ToolIndexes(); // content block index -> reasoning_details index
  const provider = ctx.provider ?? 'bedrock';

  function reasoningDelta(block: number, rc: Block): ChatCompletionChunk[] | undefined {
    const i = reasoning.get(block) ?? reasoning.open(block);
    if (typeof rc.text === 'string') return reasoningChunk(ctx, rc.text, [textDetail(rc.text, BEDROCK_FORMAT, i)]);
    if (typeof rc.signature === 'string') {
      return reasoningChunk(ctx, '', [textDetail('', BEDROCK_FORMAT, i, rc.signature)]);
    }
    if (typeof rc.redactedContent === 'string') {
      return reasoningChunk(ctx, '', [encryptedDetail(rc.redactedContent, BEDROCK_FORMAT, i)]);
    }
    return undefined;
  }

  function blockDelta(d: Block): ChatCompletionChunk[] {
    const delta = isRecord(d.delta) ? d.delta : {};
    if (typeof delta.text === 'string') return [chunk(ctx, { content: delta.text })];
    if (isRecord(delta.reasoningContent)) {
      const out = reasoningDelta(Number(d.contentBlockIndex), delta.reasoningContent);
      if (out) return out;
    }
    if (isRecord(delta.toolUse)) {
      const i = tools.get(Number(d.contentBlockIndex));
      return i === undefined ? [] : [toolArgsChunk(ctx, i, String(delta.toolUse.input ?? ''))];
    }
    return [];
  }

  // A data property, not a getter: V8 kept an object literal with a getter as a dictionary, one a stream.
  const t = {
    done: false,
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = (ev.data ? parseEventJson(ev, provider) : {}) as Block;
      const name = ev.event ?? '';
      if (name.startsWith('exception:')) {
        const type = name.slice('exception:'.length);
        throw bedrockError(provider, EXCEPTION_STATUS[type] ?? 500, d, type);
      }
      switch (name) {
        case 'messageStart':
          return [roleChunk(ctx)];
        case 'contentBlockStart': {
          const tu = isRecord(d.start) && isRecord(d.start.toolUse) ? d.start.toolUse : undefined;
          if (!tu) return [];
          return [toolStartChunk(ctx, tools.open(Number(d.contentBlockIndex)), String(tu.toolUseId), String(tu.name))];
        }
        case 'contentBlockDelta':
          return blockDelta(d);
        case 'messageStop':
          stopped = true;
          return [chunk(ctx, {}, finishOf(d.stopReason))];
        case 'metadata':
          t.done = stopped;
          return [usageChunk(ctx, bedrockUsage(d.usage))];
        default:
          return [];
      }
    },
    finish: () => [],
  };
  return t;
}
