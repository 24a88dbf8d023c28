/** One Anthropic stream event as a mock upstream writes it: `event: <name>`, and data whose `type` is the name. */
export const anthropicEvent = (event: string, data: Record<string, unknown>) => ({
  event,
  data: { type: event, ...data },
});

/** Anthropic's `message_start`: an empty assistant message with the prompt's usage (and output_tokens 1, as sent). */
export function messageStart(usage: Record<string, number>, model = 'claude', id = 'msg_1') {
  return anthropicEvent('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      content: [],
      model,
      stop_reason: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
}

/** A text block as Anthropic streams it: `content_block_start` (empty text), one delta a part, `content_block_stop`. */
export function textBlock(index: number, ...parts: string[]) {
  return [
    anthropicEvent('content_block_start', { index, content_block: { type: 'text', text: '' } }),
    ...parts.map((text) => anthropicEvent('content_block_delta', { index, delta: { type: 'text_delta', text } })),
    anthropicEvent('content_block_stop', { index }),
  ];
}

/** A tool_use block as Anthropic streams it: start with empty input, the input JSON in parts, stop. */
export function toolUseBlock(index: number, id: string, name: string, ...json: string[]) {
  return [
    anthropicEvent('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } }),
    ...json.map((partial_json) =>
      anthropicEvent('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }),
    ),
    anthropicEvent('content_block_stop', { index }),
  ];
}

/** The end of an Anthropic stream: `message_delta` with the stop reason and output tokens, then `message_stop`. */
export function messageEnd(stopReason: string, outputTokens: number) {
  return [
    anthropicEvent('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    anthropicEvent('message_stop', {}),
  ];
}

/** An Anthropic Messages API answer (not streamed): an assistant message with its content blocks and usage. */
export function anthropicMessage(
  content: unknown[],
  usage: Record<string, number>,
  { stopReason = 'end_turn', model = 'claude-sonnet-4-5', id = 'msg_01' } = {},
) {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
}
