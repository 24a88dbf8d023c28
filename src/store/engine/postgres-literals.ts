import type { Param } from '../db';

/**
 * A parameter as a literal with the meaning it has as a parameter: pg sends parameters as untyped text, so a quoted
 * literal (an untyped constant) is resolved by the server exactly as the parameter would be. What pg's escapeLiteral
 * gives, by native searches and replaces rather than its loop over every character (a stored response's body passes
 * here).
 */
function literal(p: Param | undefined): string {
  if (p === null || p === undefined) return 'NULL';
  const text = typeof p === 'string' ? p : String(p);
  const quoted = text.includes("'") ? text.replaceAll("'", "''") : text;
  return text.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/**
 * `sql` with each `?` outside quoted strings replaced by its parameter as a literal: statements sent several in one
 * message (the simple query protocol, which takes no parameters).
 */
export function inlineParams(sql: string, params: readonly Param[]): string {
  if (params.length === 0) return sql;
  let n = 0;
  let quoted = false;
  let out = '';
  let from = 0;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (ch === "'") quoted = !quoted;
    else if (ch === '?' && !quoted) {
      out += sql.slice(from, i) + literal(params[n++]);
      from = i + 1;
    }
  }
  if (n !== params.length) throw new Error(`statement has ${n} placeholders for ${params.length} parameters`);
  return out + sql.slice(from);
}
