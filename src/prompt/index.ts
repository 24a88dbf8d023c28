import type { ChatMessage } from '../types/openai';
import { messageText } from '../tokens/count';

/** Prompt-template fields of a request (spec 4.1, advanced configuration). */
/** The request fields that carry a prompt template (LiteLLM's names): the gateway's own, never sent upstream. */
export const PROMPT_FIELDS = [
  'initial_prompt_value',
  'roles',
  'final_prompt_value',
  'bos_token',
  'eos_token',
  'hf_model_name',
] as const;

export interface PromptOptions {
  initial_prompt_value?: string;
  roles?: Record<string, { pre_message?: string; post_message?: string }>;
  final_prompt_value?: string;
  bos_token?: string;
  eos_token?: string;
  hf_model_name?: string;
}

type Template = (messages: readonly ChatMessage[]) => string;

const text = (m: ChatMessage) => messageText(m);
/** The role a template writes: a developer message is a system message. */
const roleOf = (m: ChatMessage) => (m.role === 'developer' ? 'system' : m.role);

/** System messages folded into the first user turn, for templates without a system role. */
function foldSystem(messages: readonly ChatMessage[]): ChatMessage[] {
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map(text)
    .join('\n\n');
  const rest = messages.filter((m) => m.role !== 'system' && m.role !== 'developer');
  if (!system) return rest;
  const i = rest.findIndex((m) => m.role === 'user');
  if (i === -1) return [{ role: 'user', content: system }, ...rest];
  return rest.map((m, j) => (j === i ? { ...m, content: `${system}\n\n${text(m)}` } : m));
}

/** Built-in chat templates by model family (what the families' tokenizer configs define). */
export const TEMPLATES: Record<string, Template> = {
  'llama-2': (messages) => {
    let out = '';
    const system = messages
      .filter((m) => m.role === 'system')
      .map(text)
      .join('\n');
    let first = true;
    for (const m of messages) {
      if (m.role === 'user') {
        const sys = first && system ? `<<SYS>>\n${system}\n<</SYS>>\n\n` : '';
        out += `<s>[INST] ${sys}${text(m)} [/INST]`;
        first = false;
      } else if (m.role === 'assistant') out += ` ${text(m)} </s>`;
    }
    return out;
  },
  'llama-3': (messages) =>
    `<|begin_of_text|>${messages
      .map((m) => `<|start_header_id|>${roleOf(m)}<|end_header_id|>\n\n${text(m).trim()}<|eot_id|>`)
      .join('')}<|start_header_id|>assistant<|end_header_id|>\n\n`,
  mistral: (messages) => {
    let out = '<s>';
    for (const m of foldSystem(messages)) {
      if (m.role === 'user') out += `[INST] ${text(m)} [/INST]`;
      else if (m.role === 'assistant') out += `${text(m)}</s>`;
    }
    return out;
  },
  chatml: (messages) =>
    `${messages.map((m) => `<|im_start|>${roleOf(m)}\n${text(m)}<|im_end|>\n`).join('')}<|im_start|>assistant\n`,
  gemma: (messages) =>
    `<bos>${foldSystem(messages)
      .map((m) => `<start_of_turn>${m.role === 'assistant' ? 'model' : 'user'}\n${text(m)}<end_of_turn>\n`)
      .join('')}<start_of_turn>model\n`,
};

/** The template family of a Hugging Face model name, if one is known. */
export function templateFor(hfModelName: string): string | undefined {
  const n = hfModelName.toLowerCase();
  if (/llama-?3|llama3/.test(n)) return 'llama-3';
  if (/llama-?2|llama2/.test(n)) return 'llama-2';
  if (/mistral|mixtral/.test(n)) return 'mistral';
  if (/gemma/.test(n)) return 'gemma';
  if (/qwen|chatml|yi-|openhermes|dolphin/.test(n)) return 'chatml';
  return undefined;
}

/**
 * The raw prompt for a text-completion style provider, deterministically: `roles` (per
 * role pre/post strings) when given, else the built-in template of `hf_model_name`'s
 * family, else ChatML; wrapped in initial/final prompt values and bos/eos tokens.
 */
export function buildPrompt(messages: readonly ChatMessage[], o: PromptOptions = {}): string {
  let body: string;
  if (o.roles && Object.keys(o.roles).length > 0) {
    const roles = o.roles;
    body = messages
      .map((m) => `${roles[m.role]?.pre_message ?? ''}${text(m)}${roles[m.role]?.post_message ?? ''}`)
      .join('');
  } else {
    const family = (o.hf_model_name && templateFor(o.hf_model_name)) || 'chatml';
    body = TEMPLATES[family](messages);
  }
  return `${o.bos_token ?? ''}${o.initial_prompt_value ?? ''}${body}${o.final_prompt_value ?? ''}${o.eos_token ?? ''}`;
}
