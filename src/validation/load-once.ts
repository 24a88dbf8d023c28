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
      const m = uncache(file);
      // Modules it loaded first (ajv's runtime helpers) stay cached: they must not keep it as their parent.
      for (const child of m?.children ?? []) if (child.parent === m) child.parent = module;
    }
  }
}

/**
 * Load a package (by its name) for the moment: every module of it that this call loads is left in no module cache,
 * so once the caller lets go of what it used, the package's code and source text are garbage. For what only start-up
 * needs (the YAML parser reads the config once).
 */
export function requirePackageForNow<T>(name: string): T {
  const file = require.resolve(name);
  const at = file.lastIndexOf(`/node_modules/${name}/`);
  const dir = at >= 0 ? file.slice(0, at + `/node_modules/${name}/`.length) : null;
  const before = new Set(Object.keys(require.cache));
  try {
    return require(file) as T;
  } finally {
    if (dir !== null) for (const f of Object.keys(require.cache)) if (!before.has(f) && f.startsWith(dir)) uncache(f);
  }
}

/** Take a module out of the module cache and out of this module's children (what kept it alive); the module. */
function uncache(file: string): NodeJS.Module | undefined {
  const m = require.cache[file];
  delete require.cache[file];
  const i = m ? module.children.indexOf(m) : -1;
  if (i >= 0) module.children.splice(i, 1);
  return m;
}

/**
 * A getter of what `make` makes, held weakly: while something else holds it, calls share it; once nothing does, it
 * is garbage and the next call makes it again. For what start-up needs for a moment (validators, a compiler).
 */
export function heldWeakly<T extends object>(make: () => T): () => T {
  let ref: WeakRef<T> | undefined;
  return () => {
    let v = ref?.deref();
    if (!v) {
      v = make();
      ref = new WeakRef(v);
    }
    return v;
  };
}
