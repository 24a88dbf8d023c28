#!/usr/bin/env node
// `check`: exit 0 when dist/ is newer than every source file (npm start then skips the build),
// 1 otherwise. `write`: record that a build just finished. Plain Node, no dependencies.
'use strict';
const { existsSync, readdirSync, statSync, writeFileSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');
const SOURCES = ['src', 'plugins', 'console', 'bench', 'test', 'package.json', 'package-lock.json', 'tsconfig.json'];
const SKIP = new Set(['node_modules', '.git', 'dist', 'data', '.tmp']);

function newest(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs; // a deleted file changes its directory's mtime
  for (const e of readdirSync(path)) if (!SKIP.has(e)) m = Math.max(m, newest(join(path, e)));
  return m;
}

const latest = Math.max(...SOURCES.map((s) => newest(join(root, s))));
if (process.argv[2] === 'write') {
  writeFileSync(stamp, String(latest));
} else {
  const built = existsSync(stamp) ? Number(readFileSync(stamp, 'utf8')) : -1;
  const fresh =
    built >= latest &&
    existsSync(join(root, 'dist', 'src', 'cli.js')) &&
    existsSync(join(root, 'dist', 'console', 'app.js'));
  if (!fresh) process.stdout.write('build: sources changed since the last build (or none yet), building...\n');
  process.exit(fresh ? 0 : 1);
}
