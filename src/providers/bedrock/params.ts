import { drop, keep, own, paramNames, rename, transform, type ParamTable } from '../shared/params';
import { stopList } from '../shared/request';

/** OpenAI fields -> Converse's inferenceConfig. */
export const BEDROCK_TABLE: ParamTable = {
  max_completion_tokens: rename('maxTokens'),
  max_tokens: rename('maxTokens'),
  temperature: keep,
  top_p: rename('topP'),
  stop: transform('stopSequences', stopList),
  tools: own('toolConfig.tools as toolSpec, a cachePoint after a tool with cache_control (request.ts)'),
  tool_choice: own('toolConfig.toolChoice any, tool or auto; none sends no tools'),
  reasoning_effort: own(
    "additionalModelRequestFields: Claude's thinking, Nova's reasoningConfig, else reasoning_effort",
  ),
  reasoning: own("additionalModelRequestFields: Claude's thinking, Nova's reasoningConfig, else reasoning_effort"),
  stream: own('/converse-stream'),
  stream_options: drop('usage always comes in the metadata event'),
};

export const BEDROCK_PARAMS: readonly string[] = paramNames(BEDROCK_TABLE);
