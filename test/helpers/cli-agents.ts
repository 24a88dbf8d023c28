import { spawn } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';

/**
 * What the coding-agent tests (Claude Code, Codex CLI) share: a loopback HTTP proxy that refuses everything (any host
 * but the gateway stays unreached, and is named), and running a command to its end with a deadline.
 */
export async function refusingProxy(): Promise<{ server: Server; url: string; refused: string[] }> {
  const refused: string[] = [];
  const server = createServer((s) => {
    s.once('data', (d: Buffer) => {
      refused.push(d.toString('latin1').split('\r\n')[0]);
      s.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, refused };
}

/** Run `cmd` to its end (killed past `timeoutMs`): its exit code and what it printed. */
export function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
