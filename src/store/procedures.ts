import type { Proc } from './db';
import { committedProc, countHoldsProc, noteHoldProc, reserveProc, staleHoldsProc } from './credit';
import { settleProc } from './credit-settle';
import { consumeProc } from './oauth-codes';
import { rollupStepProc } from './usage-rollup';

/** Every procedure by name: the SQLite worker finds what Db.call() names here. Add new ones to this list. */
const list = [
  reserveProc,
  committedProc,
  noteHoldProc,
  settleProc,
  staleHoldsProc,
  countHoldsProc,
  consumeProc,
  rollupStepProc,
] as unknown as Array<Proc<unknown, unknown>>;

export const procedures: ReadonlyMap<string, Proc<unknown, unknown>> = new Map(list.map((p) => [p.name, p]));
