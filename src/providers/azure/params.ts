import { own, paramNames, type ParamTable } from '../shared/params';
import { OPENAI_TABLE } from '../openai/params';

/** OpenAI's parameters, but Azure takes reasoning_effort rather than OpenRouter's reasoning object. */
export const AZURE_TABLE: ParamTable = {
  ...OPENAI_TABLE,
  reasoning: own('its effort becomes reasoning_effort unless that is set (request.ts)'),
};

export const AZURE_PARAMS: readonly string[] = paramNames(AZURE_TABLE);
