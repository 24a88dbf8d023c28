import { drop, keep, own, paramNames, rename, transform, type ParamTable } from '../shared/params';
import { stopList } from '../shared/request';

/** OpenAI fields -> Gemini's generationConfig. */
export const GEMINI_TABLE: ParamTable = {
  temperature: keep,
  top_p: rename('topP'),
  top_k: rename('topK'),
  max_completion_tokens: rename('maxOutputTokens'),
  max_tokens: rename('maxOutputTokens'),
  stop: transform('stopSequences', stopList),
  n: rename('candidateCount'),
  seed: keep,
  presence_penalty: rename('presencePenalty'),
  frequency_penalty: rename('frequencyPenalty'),
  logprobs: transform('responseLogprobs', (v) => (v ? true : undefined)),
  top_logprobs: transform('logprobs', (v, req) => (req.logprobs ? v : undefined)),
  response_format: own('responseMimeType application/json, and responseSchema for json_schema (request.ts)'),
  structured_outputs: drop('structured answers follow response_format'),
  tools: own('functionDeclarations with a cleaned schema (request.ts)'),
  tool_choice: own('toolConfig.functionCallingConfig mode NONE, ANY or AUTO (request.ts)'),
  reasoning_effort: own('thinkingConfig: thinkingLevel on Gemini 3, thinkingBudget before it'),
  reasoning: own('thinkingConfig: thinkingLevel on Gemini 3, thinkingBudget before it'),
  stream: own('streamGenerateContent?alt=sse'),
  stream_options: drop('usage always comes with the stream'),
};

export const GEMINI_PARAMS: readonly string[] = paramNames(GEMINI_TABLE);
