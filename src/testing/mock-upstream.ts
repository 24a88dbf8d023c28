import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
}

export type UpstreamHandler = (req: RecordedRequest, res: ServerResponse, n: number) => void | Promise<void>;

/**
 * A loopback HTTP server that plays an upstream provider. Tests give it a handler per
 * case (or a queue of handlers, one per request); it records every request and counts
 * connections, so a test can assert what reached the upstream and how often.
 */
export class MockUpstream {
  readonly requests: RecordedRequest[] = [];
  connections = 0;
  private server: Server;
  private sockets = new Set<Socket>();
  private queue: UpstreamHandler[] = [];
  handler: UpstreamHandler = (_req, res) => {
    res.statusCode = 500;
    res.end('{"error":{"message":"no handler set"}}');
  };

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s: Socket) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Handlers for the next requests, in order; after them, `handler` answers. */
  enqueue(...handlers: UpstreamHandler[]): this {
    this.queue.push(...handlers);
    return this;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const body = Buffer.concat(parts).toString('utf8');
    let json: unknown;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const rec: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json };
    this.requests.push(rec);
    const h = this.queue.shift() ?? this.handler;
    try {
      await h(rec, res, this.requests.length);
    } catch (e) {
      if (!res.headersSent) res.statusCode = 599;
      res.end(String(e));
    }
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** Write `data: <json>\n\n` frames (optionally with an `event:` line) with an optional pause between them. */
export async function writeSse(
  res: ServerResponse,
  events: Array<unknown | { event: string; data: unknown }>,
  opts: { delayMs?: number; done?: boolean; named?: boolean } = {},
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const ev of events) {
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
    if (res.destroyed) return;
    if (opts.named) {
      const e = ev as { event: string; data: unknown };
      res.write(`event: ${e.event}\ndata: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`);
    } else res.write(`data: ${typeof ev === 'string' ? ev : JSON.stringify(ev)}\n\n`);
  }
  if (opts.done !== false && !opts.named) res.write('data: [DONE]\n\n');
  res.end();
}

/** Write newline-delimited JSON (as Ollama streams): one line per value, then end the response. */
export function writeNdjson(res: ServerResponse, lines: unknown[]): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  for (const l of lines) res.write(`${JSON.stringify(l)}\n`);
  res.end();
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** OpenAI fixtures (shapes from the Chat Completions API reference). */
export const openaiFixtures = {
  completion: (content: string, model = 'gpt-4o-mini') => ({
    id: 'chatcmpl-upstream1',
    object: 'chat.completion',
    created: 1741569952,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: 19,
      completion_tokens: 10,
      total_tokens: 29,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    service_tier: 'default',
  }),
  chunk: (delta: Record<string, unknown>, finish: string | null = null, model = 'gpt-4o-mini') => ({
    id: 'chatcmpl-upstream1',
    object: 'chat.completion.chunk',
    created: 1694268190,
    model,
    system_fingerprint: 'fp_44709d6fcb',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  }),
  usageChunk: (prompt: number, completion: number, model = 'gpt-4o-mini') => ({
    id: 'chatcmpl-upstream1',
    object: 'chat.completion.chunk',
    created: 1694268190,
    model,
    system_fingerprint: 'fp_44709d6fcb',
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  }),
};
