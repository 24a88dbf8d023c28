import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { bundleConsole } from '../../console/build';

export interface Asset {
  type: string;
  body: Buffer;
}

/** The repository root, whether this file runs from source (plugins/console) or compiled (dist/plugins/console). */
export function repoRoot(dir = __dirname): string {
  return basename(resolve(dir, '../..')) === 'dist' ? resolve(dir, '../../..') : resolve(dir, '../..');
}

const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/**
 * The console's front end: compiled, it is read from dist/console (built by `npm run build`);
 * from source (tsx: tests, `npm run dev`) it is bundled in memory with esbuild from console/,
 * so it is never stale. Either way the browser loads three files from the gateway, nothing else.
 */
export async function loadAssets(
  root = repoRoot(),
  compiled = __dirname.includes(`${join('dist', 'plugins')}`),
): Promise<Map<string, Asset>> {
  const out = new Map<string, Asset>();
  const built = join(root, 'dist', 'console');
  if (compiled && existsSync(join(built, 'app.js'))) {
    for (const [f, type] of Object.entries(FILES)) out.set(f, { type, body: readFileSync(join(built, f)) });
    return out;
  }
  for (const [f, text] of Object.entries(await bundleConsole(join(root, 'console'))))
    out.set(f, { type: FILES[f], body: Buffer.from(text) });
  return out;
}
