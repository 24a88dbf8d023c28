// podman for the deployment tests, following shared/tools/container-e2e.sh: runc rather than crun (Debian's crun
// refuses this machine's hybrid cgroup layout), rlimits within what the machine allows (no CAP_SYS_RESOURCE), a
// private image store under the test cache, and a local stand-in for node:20-bookworm-slim made with debootstrap
// (make-base.sh), tagged docker.io/library/node:20-bookworm-slim so the Dockerfile's unchanged FROM line resolves
// without a registry. Base rootfs, store and build layers are kept in the cache and reused.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const prereqs = require('../../scripts/test-prereqs.js') as {
  CACHE: string;
  ensurePodman(): string[];
  ensureHelm(): string;
};
export const ensureHelm = prereqs.ensureHelm;

export const ROOT = resolve(__dirname, '../..');
export const CACHE = prereqs.CACHE;
export const IMAGE = 'localhost/model-gateway:test';
export const BASE = 'docker.io/library/node:20-bookworm-slim';
const DIR = join(CACHE, 'podman');
const run = promisify(execFile);

function hardLimit(flag: string, cap: number): number {
  const v = execFileSync('bash', ['-c', `ulimit -H${flag}`], { encoding: 'utf8' }).trim();
  return v === 'unlimited' ? cap : Math.min(Number(v), cap);
}

/** The environment podman runs in: its own config and image store under the cache (never /var/lib/containers). */
export function podmanEnv(): NodeJS.ProcessEnv {
  mkdirSync(join(DIR, 'storage'), { recursive: true });
  mkdirSync(join(DIR, 'run'), { recursive: true });
  const nofile = hardLimit('n', 1048576);
  const nproc = hardLimit('u', 32768); // podman lowers its own NPROC to 32768 at start
  writeFileSync(
    join(DIR, 'containers.conf'),
    `[containers]\ndefault_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]\n[engine]\nruntime = "runc"\n`,
  );
  writeFileSync(
    join(DIR, 'storage.conf'),
    `[storage]\ndriver = "overlay"\ngraphroot = "${join(DIR, 'storage')}"\nrunroot = "${join(DIR, 'run')}"\n`,
  );
  return {
    ...process.env,
    CONTAINERS_CONF: join(DIR, 'containers.conf'),
    CONTAINERS_STORAGE_CONF: join(DIR, 'storage.conf'),
  };
}

let env: NodeJS.ProcessEnv | undefined;

/** podman with the test's environment; rejects with its stderr on a non-zero exit. */
export async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  env ??= podmanEnv();
  try {
    const { stdout } = await run('podman', args, { env, timeout: timeoutMs, maxBuffer: 64 << 20 });
    return stdout;
  } catch (e) {
    const err = e as Error & { stderr?: string; stdout?: string };
    throw new Error(`podman ${args.join(' ')}: ${err.message}\n${err.stderr ?? ''}`);
  }
}

/** podman with its output written to a log file (long builds); rejects with the log's tail. */
export function podmanLogged(args: string[], log: string, timeoutMs: number): Promise<void> {
  env ??= podmanEnv();
  return new Promise((done, fail) => {
    const out: Buffer[] = [];
    const p = spawn('podman', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout.on('data', (b: Buffer) => out.push(b));
    p.stderr.on('data', (b: Buffer) => out.push(b));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      const text = Buffer.concat(out).toString('utf8');
      writeFileSync(log, text);
      if (code === 0) done();
      else fail(new Error(`podman ${args.slice(0, 2).join(' ')} exited ${code} (log ${log}):\n${text.slice(-4000)}`));
    });
  });
}

/**
 * Why podman cannot run containers on this machine, or undefined when it can. podman, runc and debootstrap are
 * installed first when we may (scripts/test-prereqs.js): only what is still impossible after that is a reason.
 */
export async function podmanUnavailable(): Promise<string | undefined> {
  const missing = prereqs.ensurePodman();
  if (missing.length > 0) {
    return `${missing.join(', ')} not installed and not installable here (root with apt-get is needed): apt-get install ${missing.join(' ')}`;
  }
  env ??= podmanEnv(); // our own settings: a failure here is a test failure, not a reason to skip
  try {
    await podman(['info', '--format', '{{.Host.OCIRuntime.Name}}'], 60_000);
  } catch (first) {
    // a store left inconsistent (a machine restored from a snapshot, a killed run): start it afresh, once
    resetStore();
    env = podmanEnv();
    try {
      await podman(['info', '--format', '{{.Host.OCIRuntime.Name}}'], 60_000);
    } catch (e) {
      const why = (e as Error).message.split('\n').slice(0, 4).join(' ');
      return `podman cannot start here, even on a new store: ${why} (before that: ${(first as Error).message.split('\n')[0]})`;
    }
  }
  return undefined;
}

/** Removes the private image store (and what is mounted under it); the base image is imported again from the tar. */
function resetStore(): void {
  const mounts = execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' })
    .split('\n')
    .filter((m) => m.startsWith(`${DIR}/`))
    .sort()
    .reverse();
  for (const m of mounts) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      // gone already, or not ours to unmount: rmSync below says so if it matters
    }
  }
  rmSync(join(DIR, 'storage'), { recursive: true, force: true });
  rmSync(join(DIR, 'run'), { recursive: true, force: true });
}

/** The base image: imported from the cached rootfs tar, which make-base.sh makes (once) when it is missing. */
export async function ensureBaseImage(): Promise<void> {
  const script = join(__dirname, 'make-base.sh');
  const node = process.versions.node;
  const id = createHash('sha256').update(readFileSync(script)).update(node).digest('hex').slice(0, 12);
  const label = `model-gateway.base=${id}`;
  const have = await podman(['images', '--filter', `label=${label}`, '--format', '{{.Repository}}:{{.Tag}}']);
  if (have.includes(BASE)) return;
  const tar = join(CACHE, `node20-bookworm-slim-${id}.tar`);
  if (!existsSync(tar)) {
    process.stdout.write(`      making the base image's rootfs with debootstrap (once, cached as ${tar})...\n`);
    await new Promise<void>((done, fail) => {
      const p = spawn('bash', [script, tar], { stdio: ['ignore', 'inherit', 'inherit'] });
      p.on('close', (code) => (code === 0 ? done() : fail(new Error(`make-base.sh exited ${code}`))));
    });
  }
  await podman(
    [
      'import',
      '-q',
      '--change',
      'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--change',
      `ENV NODE_VERSION=${node}`,
      '--change',
      'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
      '--change',
      `LABEL ${label}`,
      '--change',
      'ENTRYPOINT ["docker-entrypoint.sh"]',
      '--change',
      'CMD ["node"]',
      tar,
      BASE,
    ],
    300_000,
  );
}

/**
 * Builds the repository's Dockerfile as IMAGE (docker format: the OCI format drops HEALTHCHECK). The context is the
 * repository, or $DEPLOY_TEST_CONTEXT (e.g. a `git archive` export, when the work tree holds others' unfinished edits).
 */
export async function buildImage(context = process.env.DEPLOY_TEST_CONTEXT || ROOT): Promise<void> {
  await ensureBaseImage();
  await podmanLogged(
    ['build', '--format', 'docker', '--pull=never', '-t', IMAGE, context],
    join(DIR, 'build.log'),
    20 * 60_000,
  );
  // what builds a day old or more left behind (newer layers stay: they are the build cache)
  await podman(['image', 'prune', '-f', '--filter', 'until=24h']).catch(() => undefined);
}

/** The image's size in bytes, as podman counts it (uncompressed layers). */
export async function imageSize(image = IMAGE): Promise<number> {
  return Number((await podman(['image', 'inspect', image, '--format', '{{.Size}}'])).trim());
}

/** Runs podman with a file on standard input. */
export function podmanStdin(args: string[], input: string): Promise<string> {
  env ??= podmanEnv();
  return new Promise((done, fail) => {
    const p = execFile('podman', args, { env, timeout: 120_000 }, (e, stdout, stderr) =>
      e ? fail(new Error(`podman ${args.join(' ')}: ${e.message}\n${stderr}`)) : done(stdout),
    );
    p.stdin?.end(input);
  });
}

export async function removeContainers(names: string[]): Promise<void> {
  if (names.length > 0) await podman(['rm', '-f', '-t', '0', '--ignore', ...names]).catch(() => undefined);
}
