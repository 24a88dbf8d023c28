/**
 * @module
 * The guardrails plugin's own detectors by id: always available (e-mail, phone, payment cards, IBAN, IP addresses,
 * secrets, prompt injection), the national ids the operator enabled, and the operator's custom rules.
 */
import type { Detector } from '../../../src/plugin';
import { card } from './card';
import { customDetector, type CustomRule } from './custom';
import { email } from './email';
import { iban } from './iban';
import { injection } from './injection';
import { ipv4, ipv6 } from './ip';
import { NATIONAL_IDS } from './national-ids';
import { phone } from './phone';
import { secrets } from './secrets';

/** IPv4 and IPv6 as one detector (`ip_address`), as an operator thinks of them. */
const ip: Detector = {
  id: 'ip_address',
  label: 'IP',
  find: (text) => [...ipv4.find(text), ...ipv6.find(text)],
};

export const ALWAYS: readonly Detector[] = [email, phone, card, iban, ip, secrets, injection];

export function builtinDetectors(nationalIds: readonly string[], custom: readonly CustomRule[]): Detector[] {
  const out = [...ALWAYS];
  for (const id of nationalIds) {
    const d = NATIONAL_IDS[id];
    if (!d) throw new Error(`guardrails: unknown national id '${id}' (known: ${Object.keys(NATIONAL_IDS).join(', ')})`);
    out.push(d);
  }
  for (const rule of custom) out.push(customDetector(rule));
  return out;
}

export { NATIONAL_IDS };
