/**
 * @module
 * How the gateway names what it aggregates: a tool or prompt `name` of server `s` is `s__name` (SEPARATOR; server
 * names never hold it, the schema refuses `__`), a resource `uri` is `s+uri`; and the globs allowlists are written in.
 */

/** Between a server's name and its tool's or prompt's (documented in README.md; `__` is valid in every client). */
export const SEPARATOR = '__';

export const qualified = (server: string, name: string) => `${server}${SEPARATOR}${name}`;

/** `server__tool` -> [server, tool]; undefined when it names no server. */
export function splitQualified(q: string): [string, string] | undefined {
  const i = q.indexOf(SEPARATOR);
  return i > 0 ? [q.slice(0, i), q.slice(i + SEPARATOR.length)] : undefined;
}

/** A resource's URI as the gateway lists it: `server+uri` (a URI whose scheme names the server). */
export const qualifiedUri = (server: string, uri: string) => `${server}+${uri}`;

export function splitUri(q: string): [string, string] | undefined {
  const i = q.indexOf('+');
  return i > 0 ? [q.slice(0, i), q.slice(i + 1)] : undefined;
}

/** A glob (`*` any run of characters, nothing else special) as an anchored RegExp. */
export function globRe(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map(escapeRe).join('.*')}$`);
}

const escapeRe = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** Globs compiled once: `matches(name)` is true when any matches (a bare server name allows all its tools). */
export function matcher(globs: readonly string[]): (name: string) => boolean {
  const res = globs.map((g) => globRe(g.includes(SEPARATOR) || g.includes('*') ? g : `${g}${SEPARATOR}*`));
  return (name) => res.some((r) => r.test(name));
}
