import type { ServerConfig } from '../config/types';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** Whether a bind address only answers this machine (then a page elsewhere can reach it only by DNS rebinding). */
function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.') || host === '::ffff:127.0.0.1';
}

/** The Host header's name, without its port, lower-cased ("[::1]:8080" -> "[::1]"). */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.indexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}

/**
 * The Host names the gateway answers (against DNS rebinding: a page on another site that makes its own name resolve
 * to this machine's loopback still sends that name as Host). `server.allowed_hosts` lists them (`*.example.com` for
 * subdomains, `*` for any); without it, a loopback bind answers loopback names only and any other bind answers any
 * name (the operator's proxy or DNS name is not known here: set allowed_hosts). Undefined: no check.
 */
export function hostCheck(
  server: Pick<ServerConfig, 'host' | 'allowed_hosts'>,
): ((host: string | undefined) => boolean) | undefined {
  const list = server.allowed_hosts ?? (isLoopback(server.host) ? [...LOOPBACK, server.host] : ['*']);
  if (list.includes('*')) return undefined;
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of list) {
    const e = entry.toLowerCase();
    if (e.startsWith('*.')) suffixes.push(e.slice(1));
    else exact.add(e === '::1' ? '[::1]' : e);
  }
  return (header) => {
    if (header === undefined) return false;
    const name = hostName(header);
    return exact.has(name) || suffixes.some((s) => name.endsWith(s) && name.length > s.length);
  };
}
