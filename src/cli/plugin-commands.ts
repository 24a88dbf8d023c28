import { loadConfigFile, resolveConfigPath } from '../config/load';
import { loadPlugins } from '../pipeline/loader';
import type { CliCommand } from './command';

/** The --config value among a command's arguments (`--config F`, `--config=F`, `-c F`), if any. */
function configArg(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--config' || a === '-c') return args[i + 1];
    if (a.startsWith('--config=')) return a.slice('--config='.length);
  }
  return undefined;
}

/**
 * The commands the plugins of the configured chain contribute (`cli.commands` in their definitions): the config
 * is the command's --config, else $GATEWAY_CONFIG, else ./gateway.yaml. Plugins are loaded, not set up. None when
 * the config cannot be read: the core's own commands still run (and report the config's problems themselves).
 */
export function pluginCommands(args: readonly string[]): CliCommand[] {
  try {
    const config = loadConfigFile(resolveConfigPath(configArg(args)));
    return loadPlugins(config.plugins, config.baseDir).flatMap((p) => p.plugin.cli?.commands ?? []);
  } catch {
    return [];
  }
}
