/**
 * @module
 * IP addresses: dotted IPv4 with every octet 0-255 (not part of a longer dotted run such as an OID or a version
 * `1.2.3.4.5`), and IPv6 in any of its shortened forms, checked by Node's own parser.
 */
import { isIPv6 } from 'node:net';
import { regexDetector } from './match';

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const V4 = new RegExp(`(?<![\\w.:])${OCTET}(?:\\.${OCTET}){3}(?![\\w]|\\.\\d)`, 'g');
const V6 = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{1,4}|:)?(?![\w:])/g;

export const ipv4 = regexDetector('ip_address', 'IP', V4, undefined, ['.']);

/** Needs two groups of hex at least: a time `12:30:45` or `::` alone is not an address in a sentence. */
function isV6(v: string): boolean {
  const trimmed = v.replace(/\.$/, '');
  return isIPv6(trimmed) && (trimmed.match(/[0-9A-Fa-f]+/g) ?? []).length >= 2;
}

export const ipv6 = regexDetector('ipv6_address', 'IP', V6, isV6, [':']);
