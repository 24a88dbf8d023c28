import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Start `gateway start` in a child process with this YAML (JSON is YAML); resolves once it listens. */
export async function startGatewayProcess(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
  /** Another entry point (e.g. an installed package's dist/src/cli.js) and the directory to write the config in. */
  opts: { cli?: string; dir?: string } = {},
): Promise<GatewayProcess> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'gw-proc-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, JSON.stringify(config));
  const args = opts.cli ? [opts.cli] : ['--require', 'tsx/cjs', 'src/cli.ts'];
  const child = spawn(process.execPath, [...args, 'start', '--config', file], {
    cwd: opts.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`gateway exited (${code}): ${out}`)));
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    url,
    child,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * In a fresh node process (TypeScript through tsx), require `files` (paths from the repository root) and give back
 * the loaded modules whose path contains `fragment`: what loading them pulls in.
 */
export function modulesLoadedBy(files: string[], fragment: string): string[] {
  const script =
    `for (const f of ${JSON.stringify(files)}) require(f);` +
    `console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes(${JSON.stringify(fragment)}))))`;
  return JSON.parse(execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script]).toString()) as string[];
}
