/**
 * Load a generated validators module for the moment: it is left in no module cache, so once the caller lets go of what
 * it returned, its code, source text and schema objects are garbage. For the validators a gateway needs only while it
 * starts (its config, its plugins' config sections): hundreds of KB that would otherwise stay for the process's life.
 */
export function requireForNow<T>(id: string): T {
  const file = require.resolve(id);
  const cached = require.cache[file] !== undefined;
  try {
    return require(file) as T;
  } finally {
    if (!cached) {
      const m = require.cache[file];
      delete require.cache[file];
      const i = m ? module.children.indexOf(m) : -1;
      if (i >= 0) module.children.splice(i, 1);
      // Modules it loaded first (ajv's runtime helpers) stay cached: they must not keep it as their parent.
      for (const child of m?.children ?? []) if (child.parent === m) child.parent = module;
    }
  }
}
