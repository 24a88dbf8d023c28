/** One line of an Ollama /api/chat answer (qwen3): the assistant message and, by default, `done: false`. */
export const ollamaLine = (message: Record<string, unknown>, extra: Record<string, unknown> = { done: false }) => ({
  model: 'qwen3',
  created_at: '2025-05-27T22:54:57.641643Z',
  message: { role: 'assistant', content: '', ...message },
  ...extra,
});
