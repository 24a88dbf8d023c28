import { drop, keep, own, paramNames, rename, transform, type ParamTable } from '../shared/params';
import { stopList } from '../shared/request';

/** OpenAI fields -> Cohere v2 chat's (top level of the body). */
export const COHERE_TABLE: ParamTable = {
  temperature: keep,
  top_p: rename('p'),
  top_k: rename('k'),
  max_completion_tokens: rename('max_tokens'),
  max_tokens: keep,
  seed: keep,
  frequency_penalty: keep,
  presence_penalty: keep,
  stop: transform('stop_sequences', stopList),
  tools: own('tools as sent; only the forced one when tool_choice forces a function'),
  tool_choice: own('tool_choice REQUIRED (required or a forced function) or NONE'),
  response_format: own('response_format json_object, with json_schema for a schema'),
  reasoning_effort: own('thinking enabled (token_budget from reasoning.max_tokens) or disabled'),
  reasoning: own('thinking enabled (token_budget from reasoning.max_tokens) or disabled'),
  stream: own('stream: true or false'),
  stream_options: drop('usage always comes in message-end'),
};

export const COHERE_PARAMS: readonly string[] = paramNames(COHERE_TABLE);
