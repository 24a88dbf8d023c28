/**
 * @module
 * The credit plugin's fixed charges for other plugins (`credit.charge`: a priced MCP tool call): a reservation of the
 * price made and settled as a request's is, so it counts against the same balances and holds and cannot overspend.
 */
import { errors, fromNano, type CreditCharge } from '../../src/plugin';
import type { CreditReservations } from './store/repo';

export function creditCharge(reservations: CreditReservations): CreditCharge {
  return {
    async hold(accountId, keyHash, amount) {
      const r = await reservations.reserve(accountId, keyHash, amount);
      if (!r.ok) {
        const what = r.limit === 'account' ? "The account's credit" : "This key's credit limit";
        throw errors.insufficientCredits(
          r.limit === 'account' ? 'insufficient_account_credits' : 'key_limit_exceeded',
          `${what} does not cover this call (${fromNano(amount)} credits; ${fromNano(r.available)} available)`,
        );
      }
      return async (charge) => {
        await reservations.settle(r.id, charge, null);
      };
    },
  };
}
