// Mistral chat completion shapes (docs.mistral.ai API reference): OpenAI-like, usage on the last chunk.

/** A Mistral chat completion with one choice and fixed usage (16 prompt, 34 completion tokens). */
export const mistralAnswer = (message: Record<string, unknown>, finish: string) => ({
  id: 'cmpl-e5cc70bb28c444948073e77776eb30ef',
  object: 'chat.completion',
  model: 'mistral-large-latest',
  created: 1702256327,
  choices: [{ index: 0, message, finish_reason: finish }],
  usage: { prompt_tokens: 16, completion_tokens: 34, total_tokens: 50 },
});

/** A Mistral stream chunk; Mistral sends usage on the chunk that carries the finish reason. */
export const mistralChunk = (
  delta: Record<string, unknown>,
  finish: string | null = null,
  usage?: Record<string, number>,
) => ({
  id: 'cmpl-e5cc70bb28c444948073e77776eb30ef',
  object: 'chat.completion.chunk',
  created: 1702256327,
  model: 'mistral-large-latest',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...(usage ? { usage } : {}),
});
