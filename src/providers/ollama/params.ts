import type { ChatRequest } from '../../types/openai';
import { drop, keep, own, paramNames, rename, transform, type ParamTable } from '../shared/params';
import { forcedTool, stopList } from '../shared/request';

/** OpenAI fields -> Ollama's `options` (its sampling settings, under its own names). */
export const OLLAMA_TABLE: ParamTable = {
  temperature: keep,
  top_p: keep,
  top_k: keep,
  min_p: keep,
  seed: keep,
  repetition_penalty: rename('repeat_penalty'),
  presence_penalty: keep,
  frequency_penalty: keep,
  max_completion_tokens: rename('num_predict'),
  max_tokens: rename('num_predict'),
  stop: transform('stop', stopList),
  response_format: own('format: "json", or the JSON schema itself (request.ts)'),
  tools: own('tools as sent, unless tool_choice is none'),
  tool_choice: own('none: no tools are sent; required or a forced function: refused (ollamaUnsupported)'),
  reasoning_effort: own('think: a level for gpt-oss, a boolean for the rest (request.ts)'),
  reasoning: own('think: a level for gpt-oss, a boolean for the rest (request.ts)'),
  stream: own('stream: true or false'),
  stream_options: drop('usage always comes on the last line'),
};

export const OLLAMA_PARAMS: readonly string[] = paramNames(OLLAMA_TABLE);

/** Tool choices Ollama cannot honour ("required", a forced function): the params plugin drops and names them. */
export function ollamaUnsupported(req: ChatRequest): string[] {
  return req.tool_choice === 'required' || forcedTool(req) !== undefined ? ['tool_choice'] : [];
}
