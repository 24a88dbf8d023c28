import { keep, paramNames, type ParamTable } from '../shared/params';

/**
 * Parameters an OpenAI-compatible upstream accepts: every one goes as sent (the body is the
 * request itself, see request.ts), and fields no adapter knows are forwarded too.
 */
export const OPENAI_TABLE: ParamTable = {
  temperature: keep,
  top_p: keep,
  seed: keep,
  frequency_penalty: keep,
  presence_penalty: keep,
  max_tokens: keep,
  max_completion_tokens: keep,
  stop: keep,
  n: keep,
  verbosity: keep,
  response_format: keep,
  tools: keep,
  tool_choice: keep,
  parallel_tool_calls: keep,
  logit_bias: keep,
  logprobs: keep,
  top_logprobs: keep,
  user: keep,
  stream: keep,
  stream_options: keep,
  reasoning_effort: keep,
  modalities: keep,
  audio: keep,
  prediction: keep,
  service_tier: keep,
  reasoning: keep,
};

export const OPENAI_PARAMS: readonly string[] = paramNames(OPENAI_TABLE);
