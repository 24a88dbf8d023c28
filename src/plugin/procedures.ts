/**
 * The public plugin API, part "procedures": what a plugin's procedures module (`store.procedures` in its definition)
 * imports, as `model-gateway/plugin/procedures` (built-in plugins: `../../../src/plugin/procedures` from their
 * store/ folder). On SQLite that module is loaded in the store's worker thread as well, which loads this light door
 * rather than the whole API. The whole API re-exports it. Re-exports only.
 */
export { all, get, insertRows, pick, run, Rollback, spelled } from '../store/db';
export type { Dialect, Param, Proc, ProcBody, ProcMany, ProcWire, RunResult, Sql, Step } from '../store/db';
export { HoldBook, madeHold, type Hold, type MadeHold } from '../store/engine/holds';
export { scalarExact } from '../store/engine/redo-codec';
export { num, numOrNull } from '../store/money';
export { META_UPSERT } from '../store/meta';
export { windowStart, type LimitReset } from '../store/keys';
export { GENERATION_COLUMNS, generationParams, type Generation } from '../store/generations';
export { writeParams, type PendingWrite } from '../store/request-batch';
export { orderedId, randomId } from '../ids';
