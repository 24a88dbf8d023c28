import type { ServerResponse } from 'node:http';
import { errors } from '../errors';
import { splitChatRequest } from './chat-request';
import { headList } from '../http/response-head';
import { answerStream, timeoutLimits, type OperationDeps, type OperationSpec } from './run-operation';
import type { SharedServices } from '../pipeline/shared-services';
import { nextChatRound, parseWithRemoteTools, withRemoteOutput, type ChatParsed } from './chat-remote';
import { declaresRemoteTools } from './responses/remote-rounds';

/** POST /v1/chat/completions: the request as it is; the answer a completion or a chat chunk stream. */
export function chatOperation(deps: OperationDeps, shared?: SharedServices): OperationSpec<ChatParsed> {
  const limits = timeoutLimits(deps);
  return {
    name: 'chat',
    endpoint: 'chat',
    parse: (ctx, body) =>
      shared && declaresRemoteTools(body)
        ? parseWithRemoteTools(ctx, shared, body, limits)
        : splitChatRequest(body, limits),
    again: (_ctx, s, p) => nextChatRound(s, p),
    // Not an async function: a completion with nothing to wait for is written in the turn the chain ended.
    answer(ctx, s, { request, remote }) {
      const result = s.result;
      if (!result || result.kind === 'embeddings') throw errors.internal();
      if (result.kind === 'completion') {
        const write = () => {
          ctx.respond = false;
          const body = remote ? withRemoteOutput(result.body, remote) : result.body;
          writeCompletion(ctx.res, s.requestId, s.responseHeaders, JSON.stringify(body));
        };
        return s.beforeAnswer ? runInTurn(s.beforeAnswer).then(write) : write();
      }
      return answerStream(ctx, s, result.stream, deps, request.stream_options?.include_usage === true).then(noop);
    },
  };
}

/** Each function in turn, each awaited before the next starts. */
async function runInTurn(fs: ReadonlyArray<() => unknown>): Promise<void> {
  for (const f of fs) await f();
}

function noop(): void {}

/**
 * A completion written straight to the socket: Koa's respond would set the type through a MIME lookup, stringify,
 * measure and set each header through its delegates again. The head goes in one writeHead call (headList); the
 * state's headers may replace the request id, never the body's type and length. Headers a plugin set on the response
 * before (ctx.set) are kept: node merges them (its slower path).
 */
function writeCompletion(res: ServerResponse, requestId: string, headers: Record<string, string>, text: string): void {
  const body = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)) };
  res.writeHead(200, headList({ 'X-Request-Id': requestId }, headers, body));
  res.end(text);
}
