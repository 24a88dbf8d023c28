import pino, { type Logger } from 'pino';

/**
 * JSON logs (pino). Redaction is a second line of defence: no code path logs a key, but
 * any header or field that could carry one is censored anyway.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  // Async, batched writes: the log line does not block the request, and lines go out in
  // writes of at least 4 KB, or every 100 ms when fewer come (one write per line cost
  // ~8% of the core path's CPU at c=32). flushLogger writes out the rest before exit.
  const stream = destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 });
  // On the process's own output the access lines wait for a batch of their own (see AccessBatch); a given
  // destination (tests, a caller's stream) gets them at the end of each turn of the event loop.
  const batch = new AccessBatch(stream, destination ? 0 : ACCESS_BATCH_BYTES);
  batches.set(stream, batch);
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'authorization',
          'api_key',
          'apiKey',
          'key',
          '*.api_key',
          '*.key',
          'req.headers["x-api-key"]',
          'req.headers["api-key"]',
        ],
        censor: '[redacted]',
      },
      // Any other line goes out after the access lines before it: the log keeps its order.
      hooks: { streamWrite: (line) => batch.take() + line },
    },
    stream,
  );
}

/** Write out what is buffered, then call back (before process.exit). */
export function flushLogger(logger: Logger, cb: () => void): void {
  batches.get(streamOf(logger))?.write();
  logger.flush(() => cb());
}

/** One access-log line: what the core logs for every request. Every field is free of secrets by construction. */
export interface AccessLine {
  requestId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  model?: string;
  /** The key's display form (`sk-gw-...a1b2`), never the key. */
  key?: string;
}

const json = JSON.stringify;

/**
 * JSON strings of the access line's repeated values (methods, paths, models, key labels), so that a line quotes only
 * what is new. Bounded: a client sending ever new paths only empties it.
 */
const QUOTED_MAX = 512;
const quotedCache = new Map<string, string>();
function quoted(s: string): string {
  let q = quotedCache.get(s);
  if (q === undefined) {
    if (quotedCache.size >= QUOTED_MAX) quotedCache.clear();
    quotedCache.set(s, (q = json(s)));
  }
  return q;
}

/** Bytes of access lines the process's own log output gathers before it writes them (or ACCESS_BATCH_MS passes). */
const ACCESS_BATCH_BYTES = 32 * 1024;
const ACCESS_BATCH_MS = 100;

/** Each destination's access lines not yet handed to it. */
const batches = new WeakMap<pino.DestinationStream, AccessBatch>();
/** Batches holding lines: written out on exit, before pino's destination flushes itself. */
const holding = new Set<AccessBatch>();
let exitHook = false;

function streamOf(logger: Logger): pino.DestinationStream {
  return (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
}

/**
 * Access lines on their way to a destination, joined into one string a write. With `minBytes` (the process's own
 * output), they wait until that many have come or ACCESS_BATCH_MS has passed: each write of the destination is a
 * hand-off to libuv's thread pool that cost the event loop more than the line itself (at 4 KB writes, ~6 us of the
 * core chain's CPU a request at c=32); with 0, they go at the end of the event loop's turn.
 */
class AccessBatch {
  private lines: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined = undefined;

  constructor(
    private readonly stream: pino.DestinationStream,
    private readonly minBytes: number,
  ) {}

  add(line: string): void {
    this.lines.push(line);
    this.bytes += line.length;
    if (this.timer !== undefined) {
      if (this.minBytes > 0 && this.bytes >= this.minBytes) this.write();
    } else if (this.minBytes === 0) this.timer = setImmediate(this.write);
    else this.wait();
  }

  private wait(): void {
    this.timer = setTimeout(this.write, ACCESS_BATCH_MS).unref();
    holding.add(this);
    if (!exitHook) {
      exitHook = true;
      process.prependListener('exit', () => holding.forEach((b) => b.write()));
    }
  }

  /** The lines waiting, joined (and no longer waiting). */
  take(): string {
    if (this.lines.length === 0) return '';
    const out = this.lines.join('');
    this.lines = [];
    this.bytes = 0;
    if (this.minBytes === 0) clearImmediate(this.timer as NodeJS.Immediate);
    else clearTimeout(this.timer as NodeJS.Timeout);
    this.timer = undefined;
    holding.delete(this);
    return out;
  }

  readonly write = (): void => {
    const out = this.take();
    if (out !== '') this.stream.write(out);
  };
}

/**
 * The access log: the same line pino would write for `logger.info(line, 'request')`, formatted
 * here because the redaction paths (wildcards included) cost ~3 us a line and the access line's
 * fields are fixed and hold no secret. The lines reach the logger's destination in batches (AccessBatch).
 */
export function accessLogger(logger: Logger): (line: AccessLine) => void {
  const stream = streamOf(logger);
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  const level = logger.levels.values.info;
  let batch = batches.get(stream);
  if (!batch) batches.set(stream, (batch = new AccessBatch(stream, 0)));
  const lines = batch;
  return (l) => {
    if (!logger.isLevelEnabled('info')) return;
    const model = l.model === undefined ? '' : `,"model":${quoted(l.model)}`;
    const key = l.key === undefined ? '' : `,"key":${quoted(l.key)}`;
    lines.add(
      `{"level":${level},"time":${Date.now()}${bindings},"requestId":${json(l.requestId)}` +
        `,"method":${quoted(l.method)},"path":${quoted(l.path)},"status":${l.status},"ms":${l.ms}` +
        `${model}${key},"msg":"request"}\n`,
    );
  };
}
