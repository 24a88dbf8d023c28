import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, writeSync, writevSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import Database from 'better-sqlite3';
import type { Param } from '../db';
import { decodePayload, encodePayload, textPayload } from './redo-codec';

/** Where the redo log's last committed record is kept (in the same transaction as what it holds). */
export const REDO_TABLE =
  'CREATE TABLE IF NOT EXISTS gw_redo (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL)';
export const REDO_MARK =
  'INSERT INTO gw_redo (id, seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq';

/** One acknowledged write, as the engine runs it again: a statement, or a procedure by name. */
export type RedoEntry =
  | { sql: string; params: Param[] }
  | { proc: string; args: unknown }
  | {
      proc: string;
      /** the arguments as the procedure packs them (Proc.wire) */ packed: unknown[];
      /** its number in the main thread's ahead log, when it was acknowledged from there (./ahead-log.ts) */
      ahead?: number;
    };

/** The entries one flush acknowledged, numbered: the database records the last number it committed. */
export interface RedoRecord {
  seq: number;
  entries: RedoEntry[];
}

/** Length and CRC-32 of the payload, before it. */
const HEADER = 8;

/** A record as the log keeps it: framed (length, CRC-32, payload). */
export function frameRecord(record: RedoRecord): Buffer {
  return framed(encodePayload(record, HEADER));
}

/** A record already written as JSON text (redo-codec's jsonText), in parts, framed as frameRecord frames it. */
export function frameText(parts: readonly string[]): Buffer {
  return framed(textPayload(parts, HEADER));
}

/** Fill in the header of a payload written HEADER bytes into `buf`. */
function framed(buf: Buffer): Buffer {
  buf.writeUInt32LE(buf.length - HEADER, 0);
  buf.writeUInt32LE(crc32(buf.subarray(HEADER)), 4);
  return buf;
}

/** The whole records of a log file, in order; a cut or damaged record ends it (no file: none). */
export function readRecords(path: string): RedoRecord[] {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: RedoRecord[] = [];
  for (let at = 0; at + HEADER <= buf.length;) {
    const len = buf.readUInt32LE(at);
    const end = at + HEADER + len;
    if (end > buf.length) break;
    const payload = buf.subarray(at + HEADER, end);
    if (crc32(payload) !== buf.readUInt32LE(at + 4)) break;
    out.push(decodePayload(payload) as RedoRecord);
    at = end;
  }
  return out;
}

/** Write all of `buf` at the end of the file `fd` (opened to append). */
export function writeAll(fd: number, buf: Buffer): void {
  for (let at = 0; at < buf.length;) at += writeSync(fd, buf, at, buf.length - at);
}

/**
 * Write all of `bufs`, in order, at the end of the file `fd` (opened to append), without joining them first (libuv
 * writes them in calls of at most IOV_MAX buffers, and goes on after a short write).
 */
export function writeAllv(fd: number, bufs: readonly Buffer[]): void {
  let n = writevSync(fd, bufs);
  let k = 0;
  while (k < bufs.length && n >= bufs[k].length) n -= bufs[k++].length;
  if (k < bufs.length) writeAll(fd, Buffer.concat([bufs[k].subarray(n), ...bufs.slice(k + 1)]));
}

/**
 * The SQLite engine's redo log (`<db>-redo`): what the engine acknowledged and has not committed yet. The engine keeps
 * one transaction open for a few milliseconds and answers each flush as soon as its entries are written here (one
 * write call, into the page cache: a SIGKILL of the process cannot lose it), then commits them all at once and
 * empties the log. A process that starts on a log with entries runs them again before anything else.
 *
 * Records are framed (length, CRC-32, a payload: JSON, or node:v8's serialization where JSON is not exact; see
 * ./redo-codec.ts), so a record cut short by a kill ends the log there.
 * Only one process may own the log: it holds an exclusive SQLite lock on `<db>-redo.lock` while it lives (the
 * kernel drops it with the process); a process that cannot take the lock runs without a log.
 */
export class RedoLog {
  private readonly fd: number;
  private bytes = 0;

  private constructor(
    readonly path: string,
    private readonly lock: Database.Database,
  ) {
    this.fd = openSync(path, 'a+');
    this.bytes = fstatSync(this.fd).size;
  }

  /** The log of the database at `dbPath`, or null when another connection (process or thread) owns it. */
  static open(dbPath: string): RedoLog | null {
    const lock = new Database(`${dbPath}-redo.lock`, { timeout: 0 });
    try {
      lock.pragma('journal_mode = MEMORY'); // nothing is ever written to it: no journal file beside it
      lock.pragma('locking_mode = EXCLUSIVE');
      lock.exec('BEGIN EXCLUSIVE');
    } catch {
      lock.close();
      return null;
    }
    return new RedoLog(`${dbPath}-redo`, lock);
  }

  /** The whole records in the log, in order; a cut or damaged record ends it. */
  read(): RedoRecord[] {
    return readRecords(this.path);
  }

  /** Append one record (throws when the disk refuses it: then nothing of it may be acknowledged). */
  append(record: RedoRecord): void {
    const buf = frameRecord(record);
    writeAll(this.fd, buf);
    this.bytes += buf.length;
  }

  /** Everything in it is committed: start it again from zero bytes (appends follow from there). */
  clear(): void {
    if (this.bytes === 0) return;
    ftruncateSync(this.fd, 0);
    this.bytes = 0;
  }

  close(): void {
    closeSync(this.fd);
    this.lock.close();
  }
}
