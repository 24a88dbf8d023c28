import { drop, keep, own, paramNames, rename, transform, type ParamTable } from '../shared/params';
import { stopList } from '../shared/request';

/** OpenAI fields -> the Messages API's (top level of the body). */
export const ANTHROPIC_TABLE: ParamTable = {
  temperature: transform('temperature', (v) => Math.min(v as number, 1)), // Anthropic's range is 0-1
  top_p: keep,
  top_k: keep,
  max_completion_tokens: rename('max_tokens'), // required: options.max_tokens, else 4096, when the client sets none
  max_tokens: keep,
  stop: transform('stop_sequences', stopList),
  user: transform('metadata', (v) => (typeof v === 'string' ? { user_id: v } : undefined)),
  tools: own('tools with input_schema (request.ts)'),
  tool_choice: own('tool_choice none, any, auto or tool (request.ts)'),
  parallel_tool_calls: own('false: disable_parallel_tool_use on the tool choice'),
  response_format: own('json_schema: a forced json_output tool; json_object: an instruction in the system prompt'),
  structured_outputs: drop('structured answers follow response_format'),
  reasoning_effort: own('extended thinking with a budget (request.ts)'),
  reasoning: own('extended thinking with a budget (request.ts)'),
  stream: own('stream: true'),
  stream_options: drop('usage always comes with the stream'),
};

export const ANTHROPIC_PARAMS: readonly string[] = paramNames(ANTHROPIC_TABLE);
