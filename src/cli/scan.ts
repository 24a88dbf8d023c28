import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkKey, KEY_PATTERN, keyLabel } from '../auth/key-format';

const SKIP = new Set(['node_modules', '.git', 'dist']);
const MAX_FILE = 5 * 1024 * 1024;

export interface Finding {
  file: string;
  line: number;
  label: string;
}

/** Every gateway key (the scanners' regex, confirmed by its checksum) in the files under `root`. */
export function scanForKeys(root: string): Finding[] {
  const out: Finding[] = [];
  const walk = (path: string) => {
    const st = statSync(path);
    if (st.isDirectory()) {
      for (const e of readdirSync(path)) if (!SKIP.has(e)) walk(join(path, e));
      return;
    }
    if (!st.isFile() || st.size > MAX_FILE) return;
    const text = readFileSync(path, 'utf8');
    if (!text.includes('sk-gw-')) return;
    text.split('\n').forEach((line, i) => {
      for (const m of line.matchAll(KEY_PATTERN)) {
        if (checkKey(m[0]) === 'ok')
          out.push({ file: relative(root, path) || path, line: i + 1, label: keyLabel(m[0]) });
      }
    });
  };
  walk(root);
  return out;
}

/** `gateway keys scan <path>`: prints where keys are (never the keys) and exits 1 when it finds any. */
export function runScan(args: string[]): number {
  const root = args.find((a) => !a.startsWith('-')) ?? '.';
  const json = args.includes('--json');
  const found = scanForKeys(root);
  if (json) process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
  else if (found.length === 0) process.stdout.write('no gateway keys found\n');
  else for (const f of found) process.stdout.write(`${f.file}:${f.line}: ${f.label}\n`);
  return found.length > 0 ? 1 : 0;
}
