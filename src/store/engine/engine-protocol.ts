/** The messages between the main thread and the SQLite engine (sqlite-engine.ts), its options, errors as they cross. */
import { Rollback, type Param } from '../db';

/** What the main thread asks of the SQLite engine (SQL already in the SQLite dialect). */
export type EngineRequest =
  | { op: 'read'; kind: 'all' | 'get'; sql: string; params: Param[] }
  | { op: 'write'; sql: string; params: Param[] }
  | { op: 'exec'; sql: string }
  | {
      op: 'proc';
      name: string;
      /** packed when the procedure has a wire form (Proc.wire) */ args: unknown;
      /** its number in the main thread's ahead log (./ahead-log.ts): it was acknowledged from there */
      ahead?: number;
      /**
       * The packed arguments as the JSON text the ahead log wrote (then `args` is null): a string crosses to the
       * worker as one copy, where an object graph is serialized and read back field by field on both threads.
       */
      text?: string;
    }
  | { op: 'begin' }
  | { op: 'stmt'; kind: 'all' | 'get' | 'run' | 'exec'; sql: string; params: Param[] }
  | { op: 'end'; commit: boolean }
  | { op: 'status' }
  | { op: 'close' };

/** What the engine reports of itself (tests, diagnostics). */
export interface EngineStatus {
  /** Whether the checkpointer thread runs now (a loaded file store), or checkpoints run on the writer. */
  checkpointer: boolean;
  /** Credit reservations held in memory (./holds.ts). */
  holds: number;
  /** Writes are answered once in the redo log and committed in groups (./redo-log.ts). */
  redo: boolean;
  /** The last entry of the main thread's ahead log this engine has run (./ahead-log.ts). */
  ahead: number;
}

/**
 * With a redo log, how long acknowledged writes wait in the open transaction for others to share its commit. Each
 * commit writes every page it changed (~16 a request: the generation record and its indexes, ledger, stored
 * response, balances) to the WAL; at rest a commit per request wrote ~60 KB, most of the writer's CPU and a stream
 * of writeback that slowed the next requests.
 */
export const COMMIT_MS = 25;

export interface EngineOptions {
  /**
   * Keep a redo log beside a file database, if no other connection keeps one: a write is answered as soon as it is
   * in the log, and what a few milliseconds acknowledged commits as one transaction.
   */
  redo?: boolean;
  /** How long acknowledged writes wait for their commit (COMMIT_MS; tests lengthen it to crash before it). */
  commitMs?: number;
  /**
   * The engine cannot go on (a commit or the redo log failed with writes acknowledged): its thread must end without
   * another word, and the next engine on the file replays the log. Without it the error is thrown.
   */
  fatal?: (e: unknown) => never;
  /**
   * Told the last entry of the main thread's ahead log committed, each time a commit moves it: the ahead log keeps
   * its files until then (what ran from them alone is in no redo log).
   */
  aheadCommitted?: (seq: number) => void;
}

/** The id of a worker's message item that is no answer but says which ahead entry committed last (its value). */
export const AHEAD_COMMITTED_ID = -1;

export interface ErrorInfo {
  message: string;
  code?: string;
}

export type EngineReply = { ok: true; value: unknown } | { ok: false; error: ErrorInfo };

/** An error as it crosses to the main thread: its message and code. */
export function info(e: unknown): ErrorInfo {
  if (!(e instanceof Error)) return { message: String(e) };
  const code: unknown = (e as Error & { code?: unknown }).code;
  return typeof code === 'string' ? { message: e.message, code } : { message: e.message };
}

/** The answer to an item that threw: a Rollback's value (an expected refusal), else the error. */
export function failed(e: unknown): EngineReply {
  return e instanceof Rollback ? { ok: true, value: (e as Rollback<unknown>).value } : { ok: false, error: info(e) };
}
