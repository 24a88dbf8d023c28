/**
 * @module
 * The operator's secrets of an upstream server (its header values, its process's environment) never reach a client:
 * every text from or about the server that a client may read passes through its redactor.
 */
import { isStdio, type ServerConfig } from './schema';

/** Values shorter than this are not secrets worth cutting (and cutting them would mangle ordinary words). */
const SHORTEST = 6;

export function redactor(config: ServerConfig): (text: string) => string {
  const values = secretValues(config).flatMap((v) => {
    // A header `Bearer abc...` holds its secret after the scheme: cut either spelling.
    const parts = [v, ...v.split(/\s+/)];
    return parts.filter((p) => p.length >= SHORTEST);
  });
  const unique = [...new Set(values)].sort((a, b) => b.length - a.length);
  if (unique.length === 0) return (t) => t;
  return (text) => unique.reduce((t, v) => t.split(v).join('[redacted]'), text);
}

/** Header values (or the process's environment) and what a URL carries in its password and query. */
function secretValues(config: ServerConfig): string[] {
  if (isStdio(config)) return Object.values(config.env ?? {});
  const url = new URL(config.url);
  return [...Object.values(config.headers ?? {}), url.password, ...url.searchParams.values()].filter(Boolean);
}
