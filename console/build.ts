import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Bundle the console's front end (console/main.ts and what it imports) with esbuild into
 * one script, beside its HTML and CSS. Used by `npm run build` (written to dist/console)
 * and, from source, by the console plugin in memory.
 */
export async function bundleConsole(dir: string): Promise<Record<'index.html' | 'app.js' | 'app.css', string>> {
  const esbuild = await import('esbuild');
  const r = await esbuild.build({
    entryPoints: [join(dir, 'main.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    target: 'es2020',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return {
    'index.html': readFileSync(join(dir, 'index.html'), 'utf8'),
    'app.js': r.outputFiles[0].text,
    'app.css': readFileSync(join(dir, 'app.css'), 'utf8'),
  };
}

/** `node dist/console/build.js` (npm run build): write the bundle to dist/console. */
if (require.main === module) {
  const root = join(__dirname, '..', '..');
  const out = join(root, 'dist', 'console');
  bundleConsole(join(root, 'console')).then(
    (files) => {
      mkdirSync(out, { recursive: true });
      for (const [name, text] of Object.entries(files)) writeFileSync(join(out, name), text);
      process.stdout.write(`console: ${Object.keys(files).join(', ')} -> ${out}\n`);
    },
    (e: unknown) => {
      process.stderr.write(`console build failed: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
