/**
 * The console's store procedures (its `store.procedures` module, loaded on SQLite in the store's worker thread): the
 * fold of the records staged by the rollup trigger into the aggregates (./rollups.ts, decision 0037).
 */
import { run, type Proc } from '../../../src/plugin/procedures';
import { foldStatements, STAGED } from './rollups';

const FOLD = foldStatements();

/** Run by the SQLite engine whenever usage_pending has a row, before any commit; never called by the plugin. */
export const foldUsageProc: Proc<void, void> = {
  name: 'console.fold_usage',
  foldsStaged: STAGED,
  *body() {
    for (const sql of FOLD) yield* run(sql);
  },
};
