import { drop, keep, paramNames, rename, transform, type ParamTable } from '../shared/params';

/**
 * Mistral refuses fields it does not define (422 extra_forbidden): only these go, under
 * Mistral's names. The first field present wins a name (seed over random_seed, max_tokens
 * over max_completion_tokens).
 */
export const MISTRAL_TABLE: ParamTable = {
  temperature: keep,
  top_p: keep,
  max_tokens: keep,
  max_completion_tokens: rename('max_tokens'),
  stop: keep,
  n: keep,
  seed: rename('random_seed'),
  random_seed: keep,
  presence_penalty: keep,
  frequency_penalty: keep,
  response_format: keep,
  tools: keep,
  tool_choice: transform('tool_choice', (v) => (v === 'required' ? 'any' : v)),
  parallel_tool_calls: keep,
  safe_prompt: keep,
  prediction: keep,
  prompt_mode: keep,
  stream_options: drop('Mistral sends usage on the last chunk by itself'),
};

export const MISTRAL_PARAMS: readonly string[] = paramNames(MISTRAL_TABLE);
