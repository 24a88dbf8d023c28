import { drop, own, paramNames, type ParamTable } from '../shared/params';

const sampling = drop('sampling settings do not change the deterministic answer');
const notModelled = drop('the mock model has no such feature: accepted like OpenAI, without effect');

/** Every OpenAI parameter plus common sampling extras; the mock honours the ones that shape its answer. */
export const MOCK_TABLE: ParamTable = {
  temperature: sampling,
  top_p: sampling,
  seed: sampling,
  frequency_penalty: sampling,
  presence_penalty: sampling,
  max_tokens: own('cuts the answer at that many tokens (finish_reason length)'),
  max_completion_tokens: own('cuts the answer at that many tokens (finish_reason length)'),
  stop: notModelled,
  n: own('that many identical choices'),
  verbosity: notModelled,
  response_format: own('json_object: {"answer": ...}; json_schema: a value of the schema (structured.ts)'),
  tools: own('calls the tools the last user message names (answer.ts)'),
  tool_choice: own('none, required or a forced function decide the calls (answer.ts)'),
  parallel_tool_calls: own('false: at most one call'),
  logit_bias: sampling,
  logprobs: own('deterministic log probabilities of its tokens (structured.ts)'),
  top_logprobs: own('that many alternatives per token'),
  user: notModelled,
  stream: own('streamed in chunks of options.chunk_size tokens'),
  stream_options: own('usage comes last in every stream'),
  reasoning_effort: notModelled,
  modalities: notModelled,
  audio: notModelled,
  prediction: notModelled,
  service_tier: notModelled,
  reasoning: notModelled,
  top_k: sampling,
  min_p: sampling,
  top_a: sampling,
  repetition_penalty: sampling,
};

export const MOCK_PARAMS: readonly string[] = paramNames(MOCK_TABLE);
