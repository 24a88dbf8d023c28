import Module from 'node:module';
import { resolve } from 'node:path';

/** The public modules, mapped to this running gateway's own copies for every plugin it loads. */
const PUBLIC_MODULES: Record<string, string> = {
  'model-gateway/plugin': resolve(__dirname, '../plugin'),
  'model-gateway/plugin/procedures': resolve(__dirname, '../plugin/procedures'),
  'model-gateway/testing': resolve(__dirname, '../testing/index'),
};
let aliased = false;

/**
 * One module identity for plugins: `require('model-gateway/plugin')` from any plugin, in a
 * path or an installed package, resolves to the gateway that loads it (dist under
 * `npm start`, src under tsx), never to a second copy with its own registries. Per thread: the store's worker
 * thread aliases them too before it loads plugins' procedures.
 */
export function aliasPublicModules(): void {
  if (aliased) return;
  aliased = true;
  const M = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const original = M._resolveFilename;
  M._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
    return original.call(this, PUBLIC_MODULES[request] ?? request, ...rest);
  };
}
