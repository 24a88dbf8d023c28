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
