/**
 * The public plugin API, part "kit": small helpers a plugin's setup, metrics, mail and CLI commands use. Re-exports
 * only.
 */
export { randomId } from '../ids';
export { nowMs } from '../clock';
export { callAsync } from '../call-async';
/** prom-client's classes (the ones the gateway's registry uses, without prom-client's index). */
export { Counter, Gauge, Histogram, collectDefaultMetrics, type Registry } from '../metrics/prom-client';
export { smtpSchema, smtpTransport, type SmtpSettings } from '../mail/smtp';
/** For a plugin's CLI commands (`cli.commands` in its definition): flags with --config/--json, the store, output. */
export { auditCli, fail, print, withStore } from '../cli/store-cli';
export { findKey } from '../cli/key-ref';
export { findAccount } from '../cli/account-ref';
/** A fail-fast ioredis client for a plugin's own state in Redis. */
export { failFastRedis } from '../pipeline/redis-client';
