import { expect } from 'chai';
import fc from 'fast-check';
import { countPromptTokens, promptTokensAtMost } from '../../src/tokens/count';
import type { ChatRequest } from '../../src/types/openai';

describe('prompt token bound', () => {
  it('is never below the gateway tokenizer count, whatever the text (unicode, tool calls, tools)', () => {
    const text = fc.string({ unit: 'binary', maxLength: 200 });
    const message = fc.record(
      {
        role: fc.constantFrom('user', 'assistant', 'system'),
        content: fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 3 })),
        name: fc.option(text, { nil: undefined }),
        tool_calls: fc.option(
          fc.array(
            fc.record({
              id: text,
              type: fc.constant('function'),
              function: fc.record({ name: text, arguments: text }),
            }),
            {
              maxLength: 2,
            },
          ),
          { nil: undefined },
        ),
      },
      { requiredKeys: ['role', 'content'] },
    );
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 5 }), fc.option(fc.jsonValue()), (messages, tools) => {
        const req = { model: 'm', messages, ...(tools === null ? {} : { tools }) } as unknown as ChatRequest;
        expect(promptTokensAtMost(req)).to.be.at.least(countPromptTokens(req));
      }),
    );
  });
});
