/** A Bedrock Converse answer: the assistant message's content blocks, the stop reason, usage, and any more fields. */
export function converseAnswer(
  content: unknown[],
  stopReason: string,
  usage: Record<string, number>,
  more: Record<string, unknown> = {},
) {
  return { output: { message: { role: 'assistant', content } }, stopReason, usage, ...more };
}
