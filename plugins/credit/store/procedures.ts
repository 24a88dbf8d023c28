/**
 * The credit plugin's store procedures (its `store.procedures` module): reserving and settling, run on SQLite in
 * the store's worker thread, which loads this module (and through it ./reserve.ts, ./settle.ts, ./wire.ts: they
 * import only the light door src/plugin/procedures).
 */
export { committedProc, countHoldsProc, noteHoldProc, reserveProc, staleHoldsProc } from './reserve';
export { settleProc } from './settle';
