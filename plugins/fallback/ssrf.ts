import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { errors, type GatewayError } from '../../src/plugin';

/** Address ranges a client-supplied upstream may never point at (RFC 6890 special-purpose, private, metadata). */
const BLOCKED_V4 = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const;
const BLOCKED_V6 = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
  ['2001::', 23],
] as const;
/** Cloud metadata services: refused even when the operator allows private ranges. */
const METADATA = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200', '168.63.129.16']);
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'metadata.azure.com', 'instance-data']);

const blocked = new BlockList();
for (const [a, p] of BLOCKED_V4) blocked.addSubnet(a, p, 'ipv4');
for (const [a, p] of BLOCKED_V6) blocked.addSubnet(a, p, 'ipv6');

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), -compatible or NAT64 (64:ff9b::) IPv6 address. */
export function embeddedV4(v6: string): string | null {
  const m = /^(?:::ffff:(?:0:)?|::|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(v6) ?? null;
  if (m) {
    const hi = parseInt(m[1], 16);
    const lo = parseInt(m[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  const d = /^(?:::ffff:(?:0:)?|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(v6);
  return d ? d[1] : null;
}

export interface SsrfPolicy {
  /** Hosts (`api.example.com`) or URL prefixes (`https://api.example.com/v1`) an override may use. */
  allow: readonly string[];
  /**
   * CIDRs the operator explicitly permits despite being private (e.g. an on-premises server). Metadata addresses stay
   * refused.
   */
  allowPrivate: readonly string[];
  /** The gateway's own listening address, never a target. */
  self: { host: string; port: number };
}

export interface CheckedTarget {
  url: URL;
  /** The address that was checked: connections must go there and nowhere else (no re-resolution). */
  address: string;
  family: 4 | 6;
}

function refuse(message: string): GatewayError {
  return errors.forbidden('api_base_refused', `api_base refused: ${message}`);
}

function privateAllowed(ip: string, family: 4 | 6, policy: SsrfPolicy): boolean {
  if (policy.allowPrivate.length === 0) return false;
  const list = new BlockList();
  for (const cidr of policy.allowPrivate) {
    const [a, p] = cidr.split('/');
    const fam = isIP(a) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(a, Number(p ?? (fam === 'ipv6' ? 128 : 32)), fam);
  }
  return list.check(ip, family === 6 ? 'ipv6' : 'ipv4');
}

/** Refuses an IP that is special-purpose, private or metadata (in any spelling: mapped IPv6 included). */
export function checkAddress(ip: string, policy: SsrfPolicy, port: number): void {
  const family = isIP(ip) as 0 | 4 | 6;
  if (family === 0) throw refuse('not an IP address');
  const v4 = family === 6 ? embeddedV4(ip.toLowerCase()) : ip;
  if (METADATA.has(ip.toLowerCase()) || (v4 && METADATA.has(v4)))
    throw refuse('cloud metadata addresses are never allowed');
  if ((ip === policy.self.host || v4 === policy.self.host) && port === policy.self.port)
    throw refuse("the gateway's own address");
  const isBlocked =
    v4 && family === 6
      ? blocked.check(v4, 'ipv4') || blocked.check(ip, 'ipv6')
      : blocked.check(ip, family === 6 ? 'ipv6' : 'ipv4');
  if (isBlocked && !privateAllowed(v4 ?? ip, v4 ? 4 : family, policy))
    throw refuse('loopback, private, link-local and reserved addresses are not allowed');
}

function allowlisted(url: URL, allow: readonly string[]): boolean {
  const host = url.hostname.replace(/\.$/, '').toLowerCase();
  return allow.some((entry) => {
    if (/^https?:\/\//i.test(entry)) {
      const prefix = new URL(entry);
      return (
        url.protocol === prefix.protocol &&
        url.host.toLowerCase() === prefix.host.toLowerCase() &&
        url.pathname.startsWith(prefix.pathname.replace(/\/$/, ''))
      );
    }
    return host === entry.toLowerCase();
  });
}

/**
 * Check a client-supplied `api_base`: http(s) only, no credentials in it, on the
 * allowlist, and resolving only to public addresses (or operator-permitted ones). The
 * first checked address is returned to be pinned for the connection.
 */
export async function checkApiBase(
  raw: string,
  policy: SsrfPolicy,
  resolve: typeof lookup = lookup,
): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`scheme ${url.protocol} is not allowed`);
  if (url.username || url.password) throw refuse('credentials in the URL are not allowed');
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (METADATA_HOSTS.has(host)) throw refuse('cloud metadata hosts are never allowed');
  if (!allowlisted(url, policy.allow)) throw refuse('the host is not on the allowlist');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const literal = isIP(host);
  const addresses = literal ? [{ address: host, family: literal as 4 | 6 }] : await resolveAll(host, resolve);
  if (addresses.length === 0) throw refuse('the host does not resolve');
  for (const a of addresses) checkAddress(a.address, policy, port);
  return { url, address: addresses[0].address, family: addresses[0].family === 6 ? 6 : 4 };
}

/**
 * Every address of an allowlisted host. A name that does not exist is the client's mistake
 * (400 naming api_base); a resolver that fails for now is an unreachable upstream (502).
 */
async function resolveAll(host: string, resolve: typeof lookup): Promise<Array<{ address: string; family: number }>> {
  try {
    return (await resolve(host, { all: true })) as Array<{ address: string; family: number }>;
  } catch (e) {
    const code = (e as { code?: string }).code ?? 'unknown';
    if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EAI_NONAME') {
      throw errors.invalidRequest(
        `api_base refused: the host '${host.slice(0, 253)}' does not resolve`,
        'api_base',
        'api_base_unresolvable',
      );
    }
    throw errors.upstreamUnavailable(host.slice(0, 253), `DNS lookup failed (${code})`);
  }
}
