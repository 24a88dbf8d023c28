#!/usr/bin/env node
// Before `npm test`: the browser tests (OAuth consent page, operator console) drive Debian's
// Chromium with playwright-core. Find it, or install it when we may (root with apt-get, as
// on this project's machines and CI); otherwise say exactly what to install and fail.
'use strict';
const { existsSync } = require('node:fs');
const { execSync } = require('node:child_process');

const path = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
if (existsSync(path)) process.exit(0);
const root = typeof process.getuid === 'function' && process.getuid() === 0;
const apt = existsSync('/usr/bin/apt-get');
if (root && apt) {
  process.stdout.write(`test prerequisites: ${path} not found; installing Debian's chromium (apt-get, once)...\n`);
  execSync('apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium', { stdio: 'inherit' });
  if (existsSync(path)) process.exit(0);
}
process.stderr.write(
  `test prerequisites: the browser tests need Chromium at ${path} (or set CHROMIUM_PATH).\n` +
    `  Debian/Ubuntu: sudo apt-get install chromium\n`,
);
process.exit(1);
