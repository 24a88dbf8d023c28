#!/usr/bin/env node
// Before `npm test`: the browser tests (OAuth consent page, operator console) drive Debian's
// Chromium with playwright-core, and the Redis outage test starts its own redis-server. Find
// them, or install them when we may (root with apt-get, as on this project's machines and CI);
// otherwise say exactly what to install and fail.
'use strict';
const { existsSync } = require('node:fs');
const { execSync } = require('node:child_process');

const onPath = (cmd) => {
  try {
    execSync(`command -v ${cmd}`, { stdio: 'ignore', shell: '/bin/sh' });
    return true;
  } catch {
    return false;
  }
};
const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const needs = [
  { what: `Chromium at ${chromium} (or set CHROMIUM_PATH)`, pkg: 'chromium', present: () => existsSync(chromium) },
  { what: 'redis-server on the PATH', pkg: 'redis-server', present: () => onPath('redis-server') },
];
const missing = needs.filter((n) => !n.present());
if (missing.length === 0) process.exit(0);
const root = typeof process.getuid === 'function' && process.getuid() === 0;
if (root && existsSync('/usr/bin/apt-get')) {
  const pkgs = missing.map((n) => n.pkg).join(' ');
  process.stdout.write(`test prerequisites: installing Debian's ${pkgs} (apt-get, once)...\n`);
  execSync(
    `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${pkgs}`,
    { stdio: 'inherit' },
  );
}
const still = needs.filter((n) => !n.present());
if (still.length === 0) process.exit(0);
process.stderr.write(
  `test prerequisites missing: ${still.map((n) => n.what).join('; ')}.\n` +
    `  Debian/Ubuntu: sudo apt-get install ${still.map((n) => n.pkg).join(' ')}\n`,
);
process.exit(1);
