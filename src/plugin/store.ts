/**
 * The public plugin API, part "the store": the Store and its database, a plugin's store extension (its migrations and
 * procedures), what procedures are written with (./procedures.ts, also a door of its own for the module the store's
 * worker thread loads), generation records, the per-request write batch, the sweep gate and storeResting. Re-exports only.
 */
export type { Store } from '../store/index';
export type { Db, DbObserver } from '../store/db';
export type { StoreExtension } from '../store/extensions';
export type { Migration } from '../store/migrations/index';
export * from './procedures';
export { generationJson, type Generation } from '../store/generations';
export { deferWrite, openBatch, takeBatch, writeParams, type PendingWrite } from '../store/request-batch';
export { SweepGate } from '../store/sweep-gate';
export { storeResting } from '../store/resting';
