/**
 * The public plugin API, part "accounts, keys and credits": the admin wire format (the JSON of accounts and keys,
 * the readers of their bodies), issuing and checking keys, and credits as the ledger holds them (nano-credits).
 * Re-exports only.
 */
export {
  accountJson,
  addCreditsChecked,
  keyJson,
  keyRoleOf,
  money,
  readAccount,
  readAmount,
  readKeyPatch,
  readNewKey,
} from '../api/admin-wire';
export { creditsSchema } from '../api/admin-bodies';
export { existingSubject, type AdminSubject } from '../api/admin-subject';
export { checkKey, constantTimeEqual, generateKey, hashKey, keyLabel } from '../auth/key-format';
export { issueKey } from '../auth/issue-key';
export {
  currentWindowUsage,
  limitRemaining,
  windowStart,
  type ApiKey,
  type KeyRole,
  type LimitReset,
} from '../store/keys';
export type { Account } from '../store/accounts';
export {
  CreditsOutOfRange,
  fromNano,
  MAX_CREDITS_TEXT,
  NANO,
  nanoOrNull,
  num,
  numOrNull,
  toNano,
} from '../store/money';
