#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { resolveConfigPath } from './config/load';
import { configWarnings } from './config/warnings';
import { checkConfig, checkSetup, problemsText } from './cli/check';
import { createLogger } from './logger';
import { startGateway, handleSignals } from './start';
import cluster from 'node:cluster';
import { runWorkers, WORKER_READY } from './workers';

/** The store commands (and what they import) load only for a command or the usage text, not for `start`. */
const cliCommands = () => require('./cli/commands') as typeof import('./cli/commands');

const usage = () => `usage: gateway <command> [options]

  gateway start [--config FILE] [--workers N]
                                            start the gateway; the config is --config, else
                                            $GATEWAY_CONFIG, else ./gateway.yaml; N processes on one
                                            port (server.workers; PostgreSQL store only)
  gateway check [--config FILE]             validate the config, print every problem, exit 1 on any
${cliCommands()
  .allCommands()
  .map(
    (c) =>
      `\n${c.name}: ${c.summary}\n` +
      (c.help ?? [c.usage]).map((l) => (l.startsWith(' ') ? `          ${l}` : `  gateway ${l}`)).join('\n'),
  )
  .join('\n')}

Every command takes --config FILE; store commands take --json for machine-readable output.
From a checkout: npm run gateway -- <command> ...   (e.g. npm run gateway -- accounts list)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(usage());
    return command ? 0 : 2;
  }
  if (command === 'start' || command === 'check') {
    const { values } = parseArgs({
      args: rest,
      options: { config: { type: 'string', short: 'c' }, workers: { type: 'string', short: 'w' } },
      strict: true,
    });
    const path = resolveConfigPath(values.config);
    const count = values.workers === undefined ? undefined : Number(values.workers);
    if (count !== undefined && (!Number.isInteger(count) || count < 1 || count > 64)) {
      process.stderr.write(`gateway: --workers must be an integer from 1 to 64\n`);
      return 2;
    }
    // One set of checks for both: check never passes what start refuses (src/cli/check.ts).
    const { config, problems } = checkConfig(path, count);
    if (config && problems.length === 0 && command === 'check') problems.push(...(await checkSetup(config)));
    if (!config || problems.length > 0) {
      process.stderr.write(`${problemsText(path, problems)}\n`);
      return 1;
    }
    if (command === 'check') {
      for (const w of configWarnings(config, count)) process.stderr.write(`warning: ${w}\n`);
      process.stdout.write(
        `${path}: OK (${config.models.length} models, ${config.providers.length} providers, ` +
          `chain: ${config.plugins.map((p) => p.name).join(' -> ')})\n`,
      );
      return 0;
    }
    const workers = count ?? config.server.workers;
    const root = createLogger(config.server.log_level);
    // A worker's lines (its access log included) say which worker wrote them.
    const logger = cluster.worker ? root.child({ worker: cluster.worker.id }) : root;
    if (workers > 1 && cluster.isPrimary) {
      for (const w of configWarnings(config, workers)) logger.warn(w);
      runWorkers(workers, logger);
      return -1;
    }
    if (cluster.isPrimary) for (const w of configWarnings(config)) logger.warn(w);
    const gw = await startGateway(config, { logger });
    handleSignals(gw, logger);
    if (cluster.worker) process.send?.(WORKER_READY);
    logger.info(
      { url: gw.url, store: config.store.driver, chain: config.plugins.map((p) => p.name) },
      'gateway listening',
    );
    return -1; // keep running
  }
  return cliCommands().runCommand(command, rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`gateway: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
