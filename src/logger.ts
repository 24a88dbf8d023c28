import pino, { type Logger } from 'pino';

/**
 * JSON logs (pino). Redaction is a second line of defence: no code path logs a key, but
 * any header or field that could carry one is censored anyway.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
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
    },
    // Async, batched writes: the log line does not block the request, and lines go out in
    // writes of at least 4 KB, or every 100 ms when fewer come (one write per line cost
    // ~8% of the core path's CPU at c=32). flushLogger writes out the rest before exit.
    destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 }),
  );
}

/** Per logger, what writes out its access lines not yet handed to its destination (see accessLogger). */
const unwritten = new WeakMap<Logger, () => void>();

/** Write out what is buffered, then call back (before process.exit). */
export function flushLogger(logger: Logger, cb: () => void): void {
  unwritten.get(logger)?.();
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

/**
 * The access log: the same line pino would write for `logger.info(line, 'request')`, formatted
 * here because the redaction paths (wildcards included) cost ~3 us a line and the access line's
 * fields are fixed and hold no secret. The lines of one event-loop turn reach the logger's own destination
 * (batched there too) in one write: its buffer measures its last string's bytes on every write, so a write per
 * line re-read ~2 KB a line.
 */
export function accessLogger(logger: Logger): (line: AccessLine) => void {
  const stream = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  const level = logger.levels.values.info;
  let lines: string[] = [];
  const write = () => {
    if (lines.length === 0) return;
    const out = lines.join('');
    lines = [];
    stream.write(out);
  };
  unwritten.set(logger, write);
  return (l) => {
    if (!logger.isLevelEnabled('info')) return;
    const model = l.model === undefined ? '' : `,"model":${quoted(l.model)}`;
    const key = l.key === undefined ? '' : `,"key":${quoted(l.key)}`;
    if (
      lines.push(
        `{"level":${level},"time":${Date.now()}${bindings},"requestId":${json(l.requestId)}` +
          `,"method":${quoted(l.method)},"path":${quoted(l.path)},"status":${l.status},"ms":${l.ms}` +
          `${model}${key},"msg":"request"}\n`,
      ) === 1
    )
      setImmediate(write);
  };
}
