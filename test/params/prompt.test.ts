import { expect } from 'chai';
import { buildPrompt, templateFor } from '../../src/prompt/index';
import type { ChatMessage } from '../../src/types/openai';

const convo: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello.' },
  { role: 'user', content: 'Weather?' },
];

describe('prompt templates for raw-prompt providers (golden outputs)', () => {
  it('llama-2, picked by hf_model_name', () => {
    expect(buildPrompt(convo, { hf_model_name: 'meta-llama/Llama-2-7b-chat-hf' })).to.equal(
      '<s>[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST] Hello. </s><s>[INST] Weather? [/INST]',
    );
  });
  it('llama-3', () => {
    expect(buildPrompt(convo, { hf_model_name: 'meta-llama/Meta-Llama-3-8B-Instruct' })).to.equal(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWeather?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });
  it('mistral folds the system prompt into the first user turn', () => {
    expect(buildPrompt(convo, { hf_model_name: 'mistralai/Mistral-7B-Instruct-v0.2' })).to.equal(
      '<s>[INST] You are terse.\n\nHi [/INST]Hello.</s>[INST] Weather? [/INST]',
    );
  });
  it('gemma and chatml (the default)', () => {
    expect(buildPrompt(convo, { hf_model_name: 'google/gemma-2-9b-it' })).to.equal(
      '<bos><start_of_turn>user\nYou are terse.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n<start_of_turn>user\nWeather?<end_of_turn>\n<start_of_turn>model\n',
    );
    expect(buildPrompt(convo)).to.equal(
      '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n',
    );
  });
  it('custom roles with initial/final prompt values and bos/eos tokens', () => {
    const p = buildPrompt(convo, {
      roles: {
        system: { pre_message: '### System: ', post_message: '\n' },
        user: { pre_message: '### User: ', post_message: '\n' },
        assistant: { pre_message: '### Assistant: ', post_message: '\n' },
      },
      initial_prompt_value: 'Conversation:\n',
      final_prompt_value: '### Assistant:',
      bos_token: '<s>',
      eos_token: '</s>',
    });
    expect(p).to.equal(
      '<s>Conversation:\n### System: You are terse.\n### User: Hi\n### Assistant: Hello.\n### User: Weather?\n### Assistant:</s>',
    );
  });
  it('maps model names to families', () => {
    expect(['Qwen/Qwen2-7B-Instruct', 'mistralai/Mixtral-8x7B', 'unknown/thing'].map(templateFor)).to.deep.equal([
      'chatml',
      'mistral',
      undefined,
    ]);
  });
});
