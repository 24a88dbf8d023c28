import type { ChatRequest, FunctionTool, ToolCall, Usage } from '../../types/openai';
import { countPromptTokens, countTextTokens, messageText, splitTokens } from '../../tokens/count';
import { usage } from '../shared';
import { sampleSchema, structuredText } from './structured';
import { checkAnswer, SampleBudget } from './bounds';

/** What the mock model "decides" to answer: text, or tool calls. Pure and deterministic. */
export interface MockAnswer {
  text: string;
  pieces: string[];
  toolCalls: ToolCall[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  usage: Usage;
}

function lastUserText(req: ChatRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i];
    if (m.role === 'user') return messageText(m);
  }
  return '';
}

function chooseTools(req: ChatRequest, prompt: string): FunctionTool[] {
  const tools = (req.tools ?? []).filter((t) => t.type === 'function');
  const choice = req.tool_choice;
  if (tools.length === 0 || choice === 'none') return [];
  if (typeof choice === 'object' && choice !== null)
    return tools.filter((t) => t.function.name === choice.function.name);
  const lower = prompt.toLowerCase();
  const mentioned = tools.filter((t) => lower.includes(t.function.name.toLowerCase()));
  // The conversation already holds this turn's tool results: answer in text.
  if (req.messages[req.messages.length - 1]?.role === 'tool') return [];
  if (mentioned.length > 0) return req.parallel_tool_calls === false ? mentioned.slice(0, 1) : mentioned;
  return choice === 'required' ? tools.slice(0, 1) : [];
}

/**
 * The mock model: it answers "Mock answer: <the last user message>" (as JSON under
 * response_format: {"answer": ...} for json_object, a value of the schema for json_schema), cut at max_tokens,
 * or calls the tools the user names (all of them unless parallel_tool_calls is false;
 * `required` or a forced tool always calls one). Usage is counted with the gateway's tokenizer.
 */
export function mockAnswer(req: ChatRequest, idPrefix: string): MockAnswer {
  const prompt = lastUserText(req);
  const promptTokens = countPromptTokens(req);
  const tools = chooseTools(req, prompt);
  if (tools.length > 0) {
    const budget = new SampleBudget('tools'); // all the calls' arguments together
    const toolCalls: ToolCall[] = tools.map((t, i) => ({
      id: `call_${idPrefix.slice(-8)}_${i}`,
      type: 'function',
      function: {
        name: t.function.name,
        arguments: JSON.stringify(
          sampleSchema(t.function.parameters ?? { type: 'object' }, t.function.name, undefined, 0, budget),
        ),
      },
    }));
    checkAnswer(
      req,
      toolCalls.reduce((n, c) => n + c.function.name.length + c.function.arguments.length + 40, 0),
      0,
      false,
    );
    const completion = toolCalls.reduce(
      (n, c) => n + countTextTokens(c.function.name) + countTextTokens(c.function.arguments),
      0,
    );
    return { text: '', pieces: [], toolCalls, finishReason: 'tool_calls', usage: usage(promptTokens, completion) };
  }
  const limit = req.max_completion_tokens ?? req.max_tokens;
  const plain = `Mock answer: ${prompt || '(empty prompt)'}`;
  const all = splitTokens(structuredText(req, plain) ?? plain);
  const pieces = limit !== undefined && limit < all.length ? all.slice(0, limit) : all;
  const finishReason = pieces.length < all.length ? 'length' : 'stop';
  let bytes = 0;
  for (const p of pieces) bytes += Buffer.byteLength(p);
  checkAnswer(req, bytes, pieces.length);
  return { text: pieces.join(''), pieces, toolCalls: [], finishReason, usage: usage(promptTokens, pieces.length) };
}
