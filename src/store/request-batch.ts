import type { Param, Sql } from './db';

/** A write another plugin hands to the request's one store transaction instead of committing it itself. */
export interface PendingWrite {
  sql: Sql;
  params: Param[];
  /**
   * A JSON value that goes into `params` at `at` as its text, stringified where the write runs (for a SQLite store's
   * settlement, in the store's worker): the request's thread then does not stringify it only to stringify that text
   * again, every quote escaped, into the settlement it logs and sends.
   */
  json?: { at: number; value: unknown };
}

/** The parameters `w` runs with (its JSON value stringified in place); null when that value does not serialize. */
export function writeParams(w: PendingWrite): Param[] | null {
  if (!w.json) return w.params;
  let text: string | undefined;
  try {
    text = JSON.stringify(w.json.value) as string | undefined;
  } catch {
    return null; // a cycle or a bigint: the write is left out, never the settlement it rides with
  }
  if (text === undefined) return null;
  const params = w.params.slice();
  params[w.json.at] = text;
  return params;
}

const KEY = 'storeBatch';

/**
 * One transaction per request: the plugin that commits last (credit, settling the request)
 * opens a batch on the request before calling the rest of the chain; plugins inside it (storage)
 * defer their writes into it; the settlement commits them with the ledger row and generation
 * record. Once taken the batch is closed, so a later write is never left behind: it is refused
 * and its plugin commits it itself.
 */
export function openBatch(extensions: Record<string, unknown>): void {
  extensions[KEY] = [];
}

/**
 * Defer `w` into the request's open batch; false when there is none (commit it yourself).
 * `w` may be a function: it is called when the batch is taken, so the write sees the request
 * as it is then (e.g. the answer after the plugins between the deferring one and credit edited it).
 */
export function deferWrite(extensions: Record<string, unknown>, w: PendingWrite | (() => PendingWrite)): boolean {
  const batch = extensions[KEY];
  if (!Array.isArray(batch)) return false;
  (batch as Array<PendingWrite | (() => PendingWrite)>).push(w);
  return true;
}

/** The writes deferred so far, closing the batch (a deferred function that throws adds nothing). */
export function takeBatch(extensions: Record<string, unknown>): PendingWrite[] {
  const batch = extensions[KEY];
  extensions[KEY] = null;
  if (!Array.isArray(batch)) return [];
  const out: PendingWrite[] = [];
  for (const w of batch as Array<PendingWrite | (() => PendingWrite)>) {
    try {
      out.push(typeof w === 'function' ? w() : w);
    } catch {
      // a write that cannot be made (e.g. a body that does not serialize) is left out, never the settlement
    }
  }
  return out;
}

/** Whether a plugin opened the request's batch (the credit plugin's settlement then writes its record). */
export function batchOpened(extensions: Record<string, unknown>): boolean {
  return KEY in extensions;
}
