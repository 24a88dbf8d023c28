/**
 * @module
 * The credit plugin: credit metering that cannot overspend. Before the upstream call it reserves an upper bound of
 * what the request can cost over every attempt of its plan (middleware.ts, reservation.ts, bound.ts; 402 and nothing
 * sent when the account or key cannot cover it); it settles to the checked real cost capped at that bound (settle.ts,
 * usage-check.ts; the excess is an overrun, recorded, counted in metrics.ts and logged), for plain answers and streams
 * alike (also cut or broken ones), and writes the generation record (record.ts; GET /generation in routes.ts). Every
 * answer's usage carries `cost` in credits. Reserving and settling are the store's work (store/). See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth
 *   - params
 *   - fallback                    # when used, before credit: credit reserves for every attempt of its plan
 *   - credit:
 *       stale_reservation_ms: 0   # release reservations older than this (a crashed replica's);
 *                                 # 0 = server.max_request_timeout_s + 60 s
 *   - routing
 * ```
 */
import { CREDIT_CHARGE, definePlugin, type GatewayState } from '../../src/plugin';
import { creditCharge } from './charge';
import { creditMetrics } from './metrics';
import { creditMiddleware, reservationGuard } from './middleware';
import { priceBook } from './price';
import { registerGenerationRoutes } from './routes';
import { configSchema, type CreditConfig } from './schema';
import { settlement } from './settle';
import { creditMigrations } from './store/migrations';
import { CreditReservations } from './store/repo';

export default definePlugin<CreditConfig>({
  name: 'credit',
  description: 'Reserves and settles credit per request; generation records.',
  requires: ['principal'],
  provides: ['credit'],
  // The plan must be final when credit reserves for every attempt of it.
  after: ['fallback'],
  store: { migrations: creditMigrations, procedures: require.resolve('./store/procedures') },
  configSchema,
  async setup(config, services) {
    const { store, logger, models, shared } = services;
    const reservations = CreditReservations.of(store);
    const prices = priceBook();
    const staleMs = config.stale_reservation_ms || services.config.server.max_request_timeout_s * 1000 + 60_000;
    // One process on SQLite owns every reservation: all of them are left over from before.
    const released = await reservations.releaseStale(store.driver === 'sqlite' ? 0 : staleMs);
    if (released > 0) logger.warn({ released }, 'released credit reservations left by an earlier process');
    const sweeper = setInterval(
      () =>
        void reservations
          .releaseStale(staleMs)
          .catch((e: unknown) => logger.error({ err: e }, 'reservation sweep failed')),
      60_000,
    );
    sweeper.unref();
    registerGenerationRoutes(services.router, store, shared);
    shared.set(CREDIT_CHARGE, creditCharge(reservations));
    const covered = new WeakMap<GatewayState, Map<string, number>>();
    services.attemptGuards.register(reservationGuard(covered));
    const settle = settlement({ reservations, store, logger, metrics: creditMetrics(services.metrics) });
    return {
      middleware: creditMiddleware({ store, models, shared, prices, reservations, covered, settle }),
      close() {
        clearInterval(sweeper);
      },
    };
  },
});
