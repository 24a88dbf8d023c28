import { requireRole } from '../../src/plugin';
import { principalOf, type ConsoleSession } from './session';

/** Changes to accounts and keys need the operator role (403 `role_required` naming it otherwise). */
export function operator(s: ConsoleSession): ConsoleSession {
  requireRole(principalOf(s), 'operator');
  return s;
}
