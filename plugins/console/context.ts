import type Koa from 'koa';
import type { Store } from '../../src/store/index';
import type { ModelRegistry } from '../../src/models/registry';
import type { ConsoleSession } from './session';
import type { UsageRepo } from './usage';
import type { SharedServices } from '../../src/pipeline/shared-services';

/** What the console's route files share. */
export interface ServiceContext {
  store: Store;
  usage: UsageRepo;
  models: ModelRegistry;
  shared: SharedServices;
  /** The signed-in session of a request (401 otherwise; writes also check CSRF). */
  need(ctx: Koa.Context): Promise<ConsoleSession>;
}
