/**
 * @module
 * One upstream attempt of the plan: its call (plain, stream or embeddings), its record in the request's attempt log,
 * the deployment's health and the attempt hooks; and what the log and the guards are told of attempts.
 */
import {
  deploymentKey,
  logSkipped,
  isGatewayError,
  nowMs,
  promptTokens,
  toGatewayError,
  type AdapterContext,
  type Attempt,
  type AttemptRecord,
  type AttemptTicket,
  type AttemptUse,
  type DeploymentHealth,
  type DeploymentMeasures,
  type GatewayState,
  PROMPT_FIELDS,
  type PromptOptions,
  type Transport,
} from '../../src/plugin';
import { AttemptAbort } from './attempt-signal';
import { countsAgainstDeployment } from './fault';
import {
  callCountSameWire,
  callPlain,
  callPlainSameWire,
  callStream,
  callStreamSameWire,
  emptyAnswer,
  sameWireOf,
  type CallOptions,
} from './upstream';
import { openStream } from './stream-result';
import { callEmbeddings } from './embeddings';

export const FAILED: AttemptUse = { ok: false, tokens: 0 };

/** The request's prompt-template fields, if it sent any. */
function promptOptionsOf(o: Record<string, unknown>): PromptOptions | undefined {
  let out: Record<string, unknown> | undefined;
  for (const f of PROMPT_FIELDS) if (o[f] !== undefined) (out ??= {})[f] = o[f];
  return out as PromptOptions | undefined;
}

/** A refused attempt, in the request's attempt log: nothing reached the upstream. */
export function skipped(s: GatewayState, a: Attempt, t: Extract<AttemptTicket, { ok: false }>): void {
  logSkipped(s, a, t.guard, t.error);
}

/** Tell the guards what the attempt that answered used: now for a whole answer, at its end for a stream. */
export function endWithResult(s: GatewayState, end: (use: AttemptUse) => void): void {
  const r = s.result;
  if (r?.kind === 'stream')
    r.stream.observe({ name: 'attempt-guards', onEnd: (e) => end({ ok: true, tokens: e.usage?.total_tokens }) });
  else if (r?.kind === 'completion') end({ ok: true, tokens: r.body.usage?.total_tokens });
  else if (r?.kind === 'embeddings') end({ ok: true, tokens: r.body.usage?.total_tokens });
  else end(FAILED);
}

export interface AttemptDeps {
  transport: Transport;
  /** Each deployment's latency and throughput, for provider.sort and :nitro. */
  measures?: DeploymentMeasures;
  /** Longest silence between two chunks of an upstream stream. */
  idleTimeoutMs: number;
  limits: CallOptions['limits'];
  logError: NonNullable<CallOptions['logError']>;
}

export type AttemptOnce = (
  s: GatewayState,
  a: Attempt,
  ctx: AdapterContext,
  clientHeaders: Record<string, string> | undefined,
  health: DeploymentHealth | undefined,
) => Promise<AttemptRecord>;

/** An attempt's call options: its abort and time limits, the headers and prompt options it sends upstream. */
function callOptions(
  s: GatewayState,
  sig: AttemptAbort,
  clientHeaders: Record<string, string> | undefined,
  { idleTimeoutMs, limits, logError }: AttemptDeps,
): CallOptions {
  const extraHeaders = s.upstreamHeaders ? { ...clientHeaders, ...s.upstreamHeaders } : clientHeaders;
  return {
    abort: sig,
    headersTimeoutMs: s.options.timeoutMs,
    idleTimeoutMs,
    extraHeaders,
    promptOptions: promptOptionsOf(s.options),
    limits,
    logError,
  };
}

/** An attempt's record in the request's attempt log, as it starts: ok until it fails. */
function newRecord(a: Attempt): AttemptRecord {
  return {
    provider: a.provider.name,
    deployment: `${a.provider.name}/${a.deployment.model}`,
    model: a.model.id,
    status: 'ok',
    latencyMs: 0,
  };
}

/**
 * What an answered attempt says of its deployment: its latency (a stream's: until it opened), and its throughput
 * (output tokens over the whole answer's time; a stream's when it ends), and the provider that served it on the
 * answer (OpenRouter's `provider` field; a stream's chunks each carry it).
 */
function measureAnswer(s: GatewayState, key: string, started: number, m: DeploymentMeasures): void {
  const r = s.result;
  const ms = nowMs() - started;
  m.recordLatency(key, ms);
  if (r?.kind === 'completion') m.recordThroughput(key, r.body.usage?.completion_tokens ?? 0, ms);
  else if (r?.kind === 'stream')
    r.stream.observe({
      name: 'measures',
      onEnd: (e) => m.recordThroughput(key, e.usage?.completion_tokens ?? 0, nowMs() - started),
    });
}

/** The provider that served, on the answer as OpenRouter names it (`provider`), every chunk of a stream too. */
export function nameProvider(s: GatewayState, name: string): void {
  const r = s.result;
  if (r?.kind === 'completion') r.body.provider = name;
  // A stamp, not an observer that rewrites: the stream may still pass through (docs/decisions/0035).
  else if (r?.kind === 'stream') r.stream.stamp('provider', name);
}

/**
 * Each deployment's key, made once: a key made for every attempt is a new string that the health and measures maps
 * hash again (and flatten first: the template makes a cons string of any longer than 12 characters).
 */
const keys = new WeakMap<Attempt['deployment'], string>();
function keyOf(d: Attempt['deployment']): string {
  let k = keys.get(d);
  if (k === undefined) keys.set(d, (k = deploymentKey(d)));
  return k;
}

/**
 * Makes (once, at setup) the function that runs one attempt: it leaves the answer in `s.result` and returns the
 * attempt's record, or throws the attempt's error; either way the record is in `s.attempts`.
 */
export function attemptRunner(deps: AttemptDeps): AttemptOnce {
  const { transport } = deps;
  return async function attemptOnce(s, a, ctx, clientHeaders, health) {
    const started = nowMs();
    const key = keyOf(a.deployment);
    health?.begin(key);
    const sig = new AttemptAbort(s.abort, s.options.timeoutMs, a.provider.name);
    const ends = s.attemptHooks?.map((h) => h(a));
    const opts = callOptions(s, sig, clientHeaders, deps);
    const record = newRecord(a);
    // A request of another wire (/v1/messages) on an adapter that speaks it goes as the client sent it (same wire).
    const inbound = s.inbound;
    const wire = inbound && sameWireOf(a, inbound);
    try {
      if (s.embeddings) {
        try {
          s.result = { kind: 'embeddings', body: await callEmbeddings(a, transport, s.embeddings, opts) };
        } finally {
          sig.dispose();
        }
      } else if (inbound?.count) {
        // A token count: the provider's own where it has one; else nothing is sent (the endpoint estimates).
        try {
          const counted = wire && callCountSameWire(a, wire, inbound, transport, ctx, opts);
          s.result = counted
            ? { kind: 'completion', wire: inbound.wire, ...(await counted) }
            : { kind: 'completion', body: emptyAnswer(ctx) };
        } finally {
          sig.dispose();
        }
      } else if (wire) {
        if (s.request.stream === true) {
          const opened = callStreamSameWire(a, wire, inbound, transport, ctx, opts);
          s.result = {
            kind: 'stream',
            stream: await openStream(opened, sig, () => promptTokens(s)),
            wire: inbound.wire,
          };
        } else {
          try {
            s.result = {
              kind: 'completion',
              wire: inbound.wire,
              ...(await callPlainSameWire(a, wire, inbound, transport, ctx, opts)),
            };
          } finally {
            sig.dispose();
          }
        }
      } else if (s.request.stream === true) {
        const stream = await openStream(callStream(a, transport, ctx, opts), sig, () => promptTokens(s));
        s.result = { kind: 'stream', stream };
      } else {
        try {
          s.result = { kind: 'completion', body: await callPlain(a, transport, ctx, opts) };
        } finally {
          sig.dispose();
        }
      }
      if (deps.measures) measureAnswer(s, key, started, deps.measures);
      return record;
    } catch (e) {
      const err = sig.aborted && isGatewayError(sig.reason) ? sig.reason : toGatewayError(e);
      record.error = { code: err.code, status: err.status };
      record.status = 'error';
      throw err;
    } finally {
      record.latencyMs = nowMs() - started;
      s.upstreamMs += record.latencyMs;
      s.attempts.push(record);
      if (ends) for (const end of ends) end(record);
      // A 4xx that is the request's fault, a client gone or a client's own short `timeout` says nothing about the
      // deployment's health.
      health?.end(key, record.status === 'ok' || !countsAgainstDeployment(record, s), record.latencyMs);
    }
  };
}
