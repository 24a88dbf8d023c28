import { openaiFixtures } from './mock-upstream';

// Azure OpenAI chat completions (learn.microsoft.com REST reference): OpenAI's shapes plus content_filter_results.

/** Content filter results with nothing filtered, as Azure attaches them to prompts and choices. */
export const safeFilters = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};

/** The chunk Azure streams first: no choices, only the prompt's filter results. */
export const promptFilterChunk = {
  id: '',
  object: '',
  created: 0,
  model: '',
  choices: [],
  prompt_filter_results: [{ prompt_index: 0, content_filter_results: safeFilters }],
};

/** An OpenAI stream chunk as Azure sends it, each choice with its content filter results. */
export const azureChunk = (delta: Record<string, unknown>, finish: string | null = null) => {
  const c = openaiFixtures.chunk(delta, finish, 'gpt-4o-2024-08-06');
  return { ...c, choices: c.choices.map((ch) => ({ ...ch, content_filter_results: safeFilters })) };
};
