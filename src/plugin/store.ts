/**
 * The public plugin API, part "the store": the Store and its database, generation records and the per-request write
 * batch. Re-exports only.
 *
 * The last block are repositories and procedures of single built-in plugins that still live in src/store (limits'
 * settings, storage's responses, the console's usage roll-up, the sweep gate): they move into their plugins with the
 * store extension (issue 42, step 3); outside plugins should not build on them.
 */
export type { Store } from '../store/index';
export type { Db, DbObserver } from '../store/db';
export type { StoreExtension } from '../store/extensions';
export type { Migration } from '../store/migrations/index';
export * from './procedures';
export { generationJson, type Generation } from '../store/generations';
export { deferWrite, openBatch, takeBatch, writeParams, type PendingWrite } from '../store/request-batch';
export type { Overrun } from '../store/credit';

export { SweepGate } from '../store/sweep-gate';
