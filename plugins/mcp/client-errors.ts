/**
 * @module
 * The errors an MCP client reads from the gateway: a JSON-RPC error whose `data.code` is a code of the gateway's (the
 * catalogue's, or `tool_not_allowed`, `tool_not_found`, `mcp_server_unavailable`) with the HTTP status it stands for,
 * and a message that names the server and never carries its secrets.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isGatewayError } from '../../src/plugin';
import { describe, UpstreamDown, type Upstream } from './upstream';
import { UnknownName } from './upstreams';

/**
 * What a request handler throws for the SDK's server to answer: not an McpError, whose message already starts with
 * "MCP error <code>: ", which the client's McpError would repeat.
 */
export class ClientError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: { code: string; status: number; retry_after?: number },
  ) {
    super(message);
  }
}

/** `e`, thrown while calling `upstream` (if known), as the client reads it. */
export function toClientError(e: unknown, upstream: Upstream | undefined): ClientError {
  if (e instanceof ClientError) return e;
  const name = upstream?.name ?? '?';
  if (e instanceof McpError) {
    if (e.code === ErrorCode.RequestTimeout)
      return new ClientError(e.code, `The MCP server '${name}' did not answer in time`, {
        code: 'upstream_timeout',
        status: 504,
      });
    if (e.code === ErrorCode.ConnectionClosed)
      return new ClientError(e.code, `The MCP server '${name}' closed the connection during the call`, {
        code: 'mcp_server_unavailable',
        status: 502,
      });
    // The server's own JSON-RPC error (bad arguments, ...): its code, its words without the secrets.
    const own = e.message.replace(/^MCP error -?\d+: /, '');
    return new ClientError(e.code, `The MCP server '${name}' answered: ${upstream ? upstream.redact(own) : own}`, {
      code: 'upstream_error',
      status: 502,
    });
  }
  if (e instanceof UnknownName)
    return new ClientError(ErrorCode.InvalidParams, e.message, { code: 'tool_not_found', status: 404 });
  if (e instanceof UpstreamDown)
    return new ClientError(ErrorCode.InternalError, e.message, { code: 'mcp_server_unavailable', status: 503 });
  if (isGatewayError(e))
    return new ClientError(e.status < 500 ? ErrorCode.InvalidRequest : ErrorCode.InternalError, e.message, {
      code: e.code,
      status: e.status,
      ...(e.retryAfter !== undefined ? { retry_after: e.retryAfter } : {}),
    });
  const reason = upstream ? describe(e, upstream.redact) : 'internal error';
  return new ClientError(ErrorCode.InternalError, `The MCP server '${name}' failed: ${reason}`, {
    code: 'mcp_server_unavailable',
    status: 502,
  });
}

/** A prompt, resource or tool the caller's allowlist leaves out. */
export function notAllowed(what: string): ClientError {
  return new ClientError(ErrorCode.InvalidRequest, `This key may not use '${what}'`, {
    code: 'tool_not_allowed',
    status: 403,
  });
}
