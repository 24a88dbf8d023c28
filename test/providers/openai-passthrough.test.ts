import { expect } from 'chai';
import { PassthroughReader } from '../../src/providers/openai/passthrough';
import { chatFrameOf } from '../../src/providers/same-wire';
import type { ChatCompletionChunk } from '../../src/types/openai';

/** The chat passthrough reader alone: which chunks it reads without a parse, and what it reads of them. */
describe('OpenAI chat passthrough reader', () => {
  const full = (): ChatCompletionChunk => {
    throw new Error('not asked for');
  };
  const reader = new PassthroughReader({ id: 'chatcmpl-gw', model: 'a/"m"', modelJson: 'a/\\"m\\"' }, full);
  const head = '"id":"chatcmpl-up","object":"chat.completion.chunk","created":17,"model":"m"';
  const choice = (delta: string, rest = ',"finish_reason":null') =>
    `{${head},"choices":[{"index":0,"delta":${delta}${rest}}]}`;

  it('reads a content chunk: its index and text (escapes decoded), the frame with the ids replaced and usage null', () => {
    const d = choice('{"content":"caf\\u00e9 \\"x\\" \\\\"}');
    const c = reader.read(d)!;
    expect(JSON.parse(JSON.stringify(c))).to.deep.equal({
      id: 'chatcmpl-gw',
      object: 'chat.completion.chunk',
      created: 17,
      model: 'a/"m"',
      choices: [{ index: 0, delta: { content: 'café "x" \\' }, finish_reason: null }],
      usage: null,
    });
    const frame = chatFrameOf(c)!.frame;
    expect(frame).to.equal(
      `data: ${d.replace('chatcmpl-up', 'chatcmpl-gw').replace('"model":"m"', '"model":"a/\\"m\\""').slice(0, -1)},"usage":null}\n\n`,
    );
    expect(JSON.parse(frame.slice(6)).model).to.equal('a/"m"');
  });

  it('reads content null, an empty delta, the model before the id, a later choice index, unknown flat fields', () => {
    expect(reader.read(choice('{"content":null}'))!.choices[0].delta).to.deep.equal({ content: null });
    expect(reader.read(choice('{}'))!.choices[0].delta).to.deep.equal({});
    const swapped =
      '{"model":"m","object":"chat.completion.chunk","id":"x","created":1,"choices":[{"index":2,"delta":{"content":"hi"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"q"}';
    const c = reader.read(swapped)!;
    expect(c.choices[0].index).to.equal(2);
    expect(chatFrameOf(c)!.frame).to.equal(
      `data: ${swapped.replace('"m"', '"a/\\"m\\""').replace('"x"', '"chatcmpl-gw"')}\n\n`,
    );
  });

  it('leaves to the full parse every chunk the gateway must read or change', () => {
    const full = [
      choice('{"role":"assistant","content":""}'),
      choice('{"content":"x"}', ',"finish_reason":"stop"'),
      choice('{"content":"x"}', ',"finish_reason":"model_length"'),
      choice('{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}'),
      choice('{"reasoning_content":"think"}'),
      choice('{"content":[{"type":"thinking","thinking":"t"}]}'),
      choice('{"content":"x"}', ',"logprobs":{"content":[{"token":"x"}]}'),
      choice('{"content":"x","refusal":"no"}'),
      choice('{"content":"x","audio":{"id":"a"}}'),
      `{${head},"choices":[],"usage":{"prompt_tokens":1}}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":1}}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`,
      `{"error":{"message":"boom"}}`,
      `{${head},"error":"boom","choices":[{"index":0,"delta":{"content":"x"}}]}`,
      `{${head.replace('"m"', '"m\\u0041"')},"choices":[{"index":0,"delta":{"content":"x"}}]}`,
      `{${head.replace('chat.completion.chunk', 'other')},"choices":[{"index":0,"delta":{"content":"x"}}]}`,
      `{${head},"meta":{"a":1},"choices":[{"index":0,"delta":{"content":"x"}}]}`,
      `{${head},"provider":"OpenAI","choices":[{"index":0,"delta":{"content":"x"}}]}`, // a field the gateway stamps
      `{ ${head},"choices":[{"index":0,"delta":{"content":"x"}}]}`,
      `{${head},"choices": [{"index":0,"delta":{"content":"x"}}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"x"}}]`,
      `{"object":"chat.completion.chunk","created":17,"model":"m","choices":[{"index":0,"delta":{"content":"x"}}]}`,
      `{${head},"choices":[{"delta":{"content":"x"}}]}`,
    ];
    for (const d of full) expect(reader.read(d), d).to.equal(undefined);
  });

  it('reads the chunks that follow one read like it by their text alone, and nothing that only looks like them', () => {
    const r = new PassthroughReader({ id: 'gw', model: 'm2', modelJson: 'm2' }, full);
    const tail = '"},"logprobs":null,"finish_reason":null}],"usage":null}';
    const at = (text: string) => `{${head},"choices":[{"index":0,"delta":{"content":"${text}${tail}`;
    const frame = (text: string) =>
      `data: ${at(text).replace('chatcmpl-up', 'gw').replace('"model":"m"', '"model":"m2"')}\n\n`;
    for (const text of ['first', 'second', 'with \\"escapes\\" \\u00e9', ''])
      expect(chatFrameOf(r.read(at(text))!)!.frame).to.equal(frame(text));
    expect(r.read(at('x\\u00e9'))!.choices[0].delta.content).to.equal('xé');
    // A second choice inside what would be the text: an unescaped quote, so not the template's; the walk refuses it.
    const two = at(`a${tail.slice(0, -14)},{"index":1,"delta":{"content":"b`);
    expect(r.read(two), two).to.equal(undefined);
    expect(r.read(at('x\\')), 'a text that escapes its closing quote').to.equal(undefined);
  });

  it('makes the whole chunk only when asked (an observer that may rewrite, another wire)', () => {
    let made = 0;
    const r = new PassthroughReader({ id: 'i', model: 'm', modelJson: 'm' }, (data) => {
      made++;
      return JSON.parse(data) as ChatCompletionChunk;
    });
    const c = r.read(choice('{"content":"x"}'))!;
    expect(made).to.equal(0);
    expect(chatFrameOf(c)!.full().choices[0].delta.content).to.equal('x');
    expect(made).to.equal(1);
  });
});
