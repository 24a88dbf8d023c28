import type Koa from 'koa';
import type { ModelRegistry, SharedServices, Store } from '../../src/plugin';
import type { ConsoleSession } from './session';
import type { UsageRepo } from './usage';

/** What the console's route files share. */
export interface ServiceContext {
  store: Store;
  usage: UsageRepo;
  models: ModelRegistry;
  shared: SharedServices;
  /** The signed-in session of a request (401 otherwise; writes also check CSRF). */
  need(ctx: Koa.Context): Promise<ConsoleSession>;
}
