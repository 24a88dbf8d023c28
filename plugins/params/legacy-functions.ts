import type { ChatCompletion, ChatCompletionChunk, ChatRequest, FunctionTool, ToolChoice } from '../../src/plugin';

/**
 * Deprecated `functions` / `function_call` (spec 9) become `tools` / `tool_choice` on the
 * way in; answers go back in the shape the client asked in (`function_call`).
 * Returns true when the request used the old form.
 */
export function functionsToTools(r: ChatRequest): boolean {
  if (!Array.isArray(r.functions) || r.tools !== undefined) return false;
  r.tools = r.functions.map((f): FunctionTool => ({ type: 'function', function: f }));
  const fc = r.function_call;
  if (fc !== undefined) {
    r.tool_choice = typeof fc === 'string' ? (fc as ToolChoice) : { type: 'function', function: { name: fc.name } };
  }
  r.parallel_tool_calls = false; // the old API called one function at a time
  delete r.functions;
  delete r.function_call;
  return true;
}

export function toolCallsToFunctionCall(c: ChatCompletion): void {
  for (const ch of c.choices) {
    const call = ch.message.tool_calls?.[0];
    if (!call) continue;
    ch.message.function_call = { name: call.function.name, arguments: call.function.arguments };
    delete ch.message.tool_calls;
    if (ch.finish_reason === 'tool_calls') ch.finish_reason = 'function_call';
  }
}

export function chunkToFunctionCall(chunk: ChatCompletionChunk): void {
  for (const ch of chunk.choices) {
    const t = ch.delta.tool_calls?.[0];
    if (t) {
      ch.delta.function_call = {
        ...(t.function?.name ? { name: t.function.name } : {}),
        arguments: t.function?.arguments ?? '',
      };
      delete ch.delta.tool_calls;
    }
    if (ch.finish_reason === 'tool_calls') ch.finish_reason = 'function_call';
  }
}
