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
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'api_key', 'apiKey', 'key', '*.api_key', '*.key', 'req.headers["x-api-key"]', 'req.headers["api-key"]'],
        censor: '[redacted]',
      },
    },
    // Async writes: the log line does not block the request; pending lines go out together.
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** Write out what is buffered, then call back (before process.exit). */
export function flushLogger(logger: Logger, cb: () => void): void {
  logger.flush(() => cb());
}
