/**
 * Model allowlists: exact ids and globs (`anthropic/*`, `*-mini`, `*`). `*` matches any
 * run of characters, `/` included; every other character is literal. A list is compiled
 * once into one predicate. An absent list (null) allows every model; an empty list none.
 */
export type ModelPredicate = (modelId: string) => boolean;

const ALLOW_ALL: ModelPredicate = () => true;

function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

export function compileAllowlist(patterns: readonly string[] | null | undefined): ModelPredicate {
  if (patterns === null || patterns === undefined) return ALLOW_ALL;
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const globs = patterns.filter((p) => p.includes('*')).map(globToRegExp);
  if (globs.length === 0) return (id) => exact.has(id);
  return (id) => exact.has(id) || globs.some((g) => g.test(id));
}

/** Both lists must allow a model (a key's list narrows its account's, never widens it). */
export function bothAllow(a: ModelPredicate, b: ModelPredicate): ModelPredicate {
  if (a === ALLOW_ALL) return b;
  if (b === ALLOW_ALL) return a;
  return (id) => a(id) && b(id);
}

/** The first pattern-keyed entry whose glob matches the model (config maps such as `models: {'mock/*': ...}`). */
export function matchFirst<T>(
  table: ReadonlyArray<{ match: ModelPredicate; value: T }>,
  modelId: string,
): T | undefined {
  for (const e of table) if (e.match(modelId)) return e.value;
  return undefined;
}

export function isAllowAll(p: ModelPredicate): boolean {
  return p === ALLOW_ALL;
}
