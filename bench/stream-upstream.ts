/**
 * The stream bench's upstream: answers a streamed request at once with as many chunks as its model's name says
 * (`chunks-<n>`), in the wire of the path it was called on: OpenAI chat SSE (/v1/chat/completions), Anthropic
 * Messages SSE (/v1/messages) or Gemini SSE (:streamGenerateContent). The chunks look like the providers' own (ids,
 * fingerprints, `usage: null` on every OpenAI chunk), each written on its own as a provider writes them. Run in its
 * own process; prints {"url": ...} when listening.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const WORDS = [' the', ' gateway', ' streams', ' tokens', ',', ' and', ' it', ' counts', ' them', '.'];

function openai(res: ServerResponse, n: number): void {
  const head = '{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741569952,';
  const mid = '"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_4691090a87","choices":';
  const frame = (choice: string, usage = 'null') => `data: ${head}${mid}[${choice}],"usage":${usage}}\n\n`;
  res.write(
    frame('{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}'),
  );
  for (let i = 0; i < n; i++)
    res.write(
      frame(`{"index":0,"delta":{"content":"${WORDS[i % WORDS.length]}"},"logprobs":null,"finish_reason":null}`),
    );
  res.write(frame('{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}'));
  res.write(
    `data: ${head}${mid}[],"usage":{"prompt_tokens":12,"completion_tokens":${n},"total_tokens":${12 + n}}}\n\n`,
  );
  res.end('data: [DONE]\n\n');
}

function anthropic(res: ServerResponse, n: number): void {
  const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  res.write(
    ev('message_start', {
      message: {
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'claude-sonnet-4-5',
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1 },
      },
    }),
  );
  res.write(ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
  for (let i = 0; i < n; i++)
    res.write(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: WORDS[i % WORDS.length] } }));
  res.write(ev('content_block_stop', { index: 0 }));
  res.write(
    ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: n } }),
  );
  res.end(ev('message_stop', {}));
}

function gemini(res: ServerResponse, n: number): void {
  const frame = (text: string, finish?: string, usage?: object) =>
    `data: ${JSON.stringify({
      candidates: [
        { content: { parts: [{ text }], role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 },
      ],
      ...(usage ? { usageMetadata: usage } : {}),
      modelVersion: 'gemini-2.0-flash',
      responseId: 'mH3pZ9HtM4uN1MkPqLWY4Ac',
    })}\r\n\r\n`;
  for (let i = 0; i < n; i++) res.write(frame(WORDS[i % WORDS.length]));
  res.end(frame('', 'STOP', { promptTokenCount: 12, candidatesTokenCount: n, totalTokenCount: 12 + n }));
}

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    const url = req.url ?? '';
    const body = Buffer.concat(parts).toString();
    const n = Number(/chunks-(\d+)/.exec(url.includes(':stream') ? url : body)?.[1] ?? 10);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (url.includes(':streamGenerateContent')) gemini(res, n);
    else if (url.endsWith('/messages')) anthropic(res, n);
    else openai(res, n);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
