/**
 * @module
 * One governed tool call, whoever asks (a session on /mcp, or a model's tool call on a chat or responses request):
 * the allowlist, the rate limit, the price held, the upstream call (its progress relayed, cancelled with the caller,
 * bounded by a timeout), the price settled, and the call recorded (store, metrics, a trace span). Errors a client
 * reads carry the server's secrets cut out.
 */
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { SpanKind, Tracer } from '@opentelemetry/api';
import { toClientError, type ClientError } from './client-errors';
import {
  CREDIT_CHARGE,
  TRACER,
  errors,
  isGatewayError,
  pluginCode,
  type GatewayError,
  type Principal,
  type SharedServices,
} from '../../src/plugin';
import type { PluginServices } from '../../src/plugin';

type Logger = PluginServices['logger'];
import type { Allows } from './governance';
import type { McpMetrics } from './metrics';
import type { CallLog, Outcome } from './store/repo';
import type { Upstream } from './upstream';
import { UnknownName, type Upstreams } from './upstreams';

export interface CallDeps {
  upstreams: Upstreams;
  limit(p: Principal): Promise<GatewayError | null>;
  price(server: string, tool: string): number;
  shared: SharedServices;
  log: CallLog;
  metrics: McpMetrics;
  logger: Logger;
  /** What the log keeps of a payload (./payloads.ts): null unless record_payloads. */
  payload(v: unknown): string | null;
  timeoutMs: number;
}

/** Who calls, what they may use, and the caller's side of the call. */
export interface Caller {
  principal: Principal;
  allows: Allows;
  signal: AbortSignal;
  onprogress?: (p: Progress) => void;
  requestId?: string | null;
}

/** OpenTelemetry's SpanKind.CLIENT (a type import: the API is loaded only with the tracing plugin). */
const CLIENT = 2 as SpanKind;

/** How a call went, for its record. */
interface Ending {
  outcome: Outcome;
  errorCode: string | null;
  result: CallToolResult | null;
}

/** Call `qname` (`server__tool`) for `caller`; the tool's result, or an McpError the client reads. */
export async function callTool(
  deps: CallDeps,
  caller: Caller,
  qname: string,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const started = Date.now();
  let upstream: Upstream | undefined;
  let tool = qname;
  let cost = 0;
  let end: Ending = { outcome: 'failed', errorCode: 'internal_error', result: null };
  try {
    ({ upstream, name: tool } = deps.upstreams.resolve(qname, 'name'));
    const refusal = await refused(deps, caller, qname);
    if (refusal) throw refusal;
    const price = deps.price(upstream.name, tool);
    const settle = price > 0 ? await hold(deps, caller.principal, price) : null;
    try {
      end = await run(deps, upstream, caller, tool, args);
    } finally {
      // The tool ran (ok, or its own error): charged; nothing answered: released.
      cost = end.outcome === 'ok' || end.outcome === 'error' ? price : 0;
      await settle?.(cost);
    }
    return end.result as CallToolResult;
  } catch (e) {
    const err = toClientError(e, upstream);
    end = { result: null, ...ending(e, err, caller.signal.aborted) };
    throw err;
  } finally {
    const done = { upstream, tool, started, cost, args, end };
    traceCall(deps.shared.get(TRACER), qname, done);
    await record(deps, caller, done);
  }
}

async function refused(deps: CallDeps, caller: Caller, qname: string): Promise<GatewayError | null> {
  if (!caller.allows(qname))
    return errors.forbidden(pluginCode('tool_not_allowed'), `This key may not call the tool '${qname}'`);
  return deps.limit(caller.principal);
}

/** Hold the price on the caller's account and key (402 when they cannot cover it); answers the settlement. */
async function hold(deps: CallDeps, p: Principal, price: number): Promise<((charge: number) => Promise<void>) | null> {
  if (p.isAdmin) return null;
  const credit = deps.shared.get(CREDIT_CHARGE);
  if (!credit) throw errors.internal();
  return credit.hold(p.accountId, p.keyHash, price);
}

async function run(
  deps: CallDeps,
  upstream: Upstream,
  caller: Caller,
  tool: string,
  args: Record<string, unknown> | undefined,
): Promise<Ending> {
  const client = upstream.connected();
  const timeout = upstream.config.timeout_ms ?? deps.timeoutMs;
  try {
    const result = (await client.callTool({ name: tool, arguments: args }, CallToolResultSchema, {
      signal: caller.signal,
      timeout,
      // A tool that reports progress may run past the timeout, never past four times it.
      resetTimeoutOnProgress: true,
      maxTotalTimeout: timeout * 4,
      ...(caller.onprogress ? { onprogress: caller.onprogress } : {}),
    })) as CallToolResult;
    return { outcome: result.isError ? 'error' : 'ok', errorCode: null, result: upstream.redactResult(result) };
  } catch (e) {
    if (!caller.signal.aborted) upstream.failed(e);
    throw e;
  }
}

function ending(e: unknown, err: ClientError, aborted: boolean): Omit<Ending, 'result'> {
  const code = err.data.code;
  if (aborted) return { outcome: 'cancelled', errorCode: 'client_closed_request' };
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) return { outcome: 'timeout', errorCode: code };
  if (isGatewayError(e) || e instanceof UnknownName) return { outcome: 'refused', errorCode: code };
  return { outcome: 'failed', errorCode: code };
}

interface Done {
  upstream: Upstream | undefined;
  tool: string;
  started: number;
  cost: number;
  args: Record<string, unknown> | undefined;
  end: Ending;
}

/** The call's row, metrics and log; a record that cannot be written is logged, never the caller's failure. */
async function record(deps: CallDeps, caller: Caller, d: Done): Promise<void> {
  const ms = Date.now() - d.started;
  const server = d.upstream?.name ?? '(unknown)';
  const tool = d.upstream ? d.tool : '(unknown)';
  deps.metrics.calls.inc({ server, tool, outcome: d.end.outcome });
  if (d.end.outcome !== 'refused') deps.metrics.duration.observe({ server, tool }, ms / 1000);
  const p = caller.principal;

  try {
    await deps.log.add({
      keyHash: p.isAdmin ? null : p.keyHash,
      accountId: p.isAdmin ? null : p.accountId,
      server,
      tool,
      durationMs: ms,
      outcome: d.end.outcome,
      errorCode: d.end.errorCode,
      cost: d.cost,
      requestId: caller.requestId ?? null,
      arguments: deps.payload(d.args),
      result: deps.payload(d.end.result),
    });
  } catch (e) {
    deps.logger.error({ err: e, server, tool }, 'MCP call record not written');
  }
}

/** A CLIENT span per call when the tracing plugin is in the chain (OpenTelemetry's MCP names where they exist). */
function traceCall(tracer: Tracer | undefined, qname: string, d: Done): void {
  if (!tracer) return;
  const span = tracer.startSpan(`tools/call ${qname}`, {
    kind: CLIENT,
    startTime: d.started,
    attributes: {
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': d.tool,
      'gateway.mcp.server': d.upstream?.name ?? '(unknown)',
      'gateway.mcp.outcome': d.end.outcome,
    },
  });
  if (d.end.outcome !== 'ok') span.setStatus({ code: 2, message: d.end.errorCode ?? d.end.outcome });
  span.end();
}
