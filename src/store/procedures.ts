import type { Proc } from './db';

type AnyProc = Proc<unknown, unknown>;

/**
 * The core's own procedures: none today (credit's, the console's and oauth's are their plugins'). Plugins bring
 * theirs as a module (`store.procedures` in their definitions).
 */
const core: AnyProc[] = [];

export const coreProcedures: ReadonlyMap<string, AnyProc> = new Map(core.map((p) => [p.name, p]));

function isProc(v: unknown): v is AnyProc {
  const p = v as Partial<AnyProc> | null;
  return typeof v === 'object' && p !== null && typeof p.name === 'string' && typeof p.body === 'function';
}

/**
 * The procedures a plugin's procedures module exports: every export that is a procedure (`{ name, body }`), and the
 * procedures of an exported array. Loaded with require, on the main thread and in the SQLite store's worker thread.
 */
export function proceduresIn(path: string): AnyProc[] {
  const mod = require(path) as Record<string, unknown>;
  const out: AnyProc[] = [];
  for (const v of Object.values(mod)) {
    if (isProc(v)) out.push(v);
    else if (Array.isArray(v)) for (const p of v as unknown[]) if (isProc(p)) out.push(p);
  }
  return [...new Set(out)];
}

/**
 * Every procedure by name, the core's and those of each module (paths): what the SQLite engine finds a call's,
 * or a logged call's, procedure in, and what PostgreSQL checks a call against. A name twice throws (the loader
 * refuses such a chain first, naming both plugins: src/store/extensions.ts).
 */
export function procedureRegistry(modules: readonly string[]): ReadonlyMap<string, AnyProc> {
  if (modules.length === 0) return coreProcedures;
  const all = new Map(coreProcedures);
  for (const path of new Set(modules))
    for (const p of proceduresIn(path)) {
      const had = all.get(p.name);
      if (had && had !== p) throw new Error(`store procedure '${p.name}' of ${path} has a name already registered`);
      all.set(p.name, p);
    }
  return all;
}
