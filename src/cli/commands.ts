import { accountsCommand } from './accounts';
import { keysCommand } from './keys';
import { dbCommand } from './db';
import type { CliCommand } from './command';
import { pluginCommands } from './plugin-commands';

export type { CliCommand } from './command';

/**
 * Sub-commands beyond start/check (keys, accounts, db). Each is one entry here, with its own file under src/cli/;
 * plugins add theirs in their definitions (`cli.commands`, src/cli/command.ts), never by an import here.
 */
export const commands: CliCommand[] = [accountsCommand, keysCommand, dbCommand];

/**
 * Every command for `gateway help`: the core's and the configured plugins' (a plugin's sub-command of a core command
 * adds its help lines to that command's).
 */
export function allCommands(args: readonly string[] = []): CliCommand[] {
  const contributed = pluginCommands(args);
  const subsOf = (name: string) => contributed.filter((c) => c.parent === name);
  const withSubs = (c: CliCommand): CliCommand => {
    const subs = subsOf(c.name);
    if (subs.length === 0) return c;
    return { ...c, help: [...(c.help ?? [c.usage]), ...subs.flatMap((s) => s.help ?? [s.usage])] };
  };
  return [...commands, ...contributed.filter((c) => c.parent === undefined)].map(withSubs);
}

export async function runCommand(name: string, args: string[]): Promise<number> {
  const contributed = pluginCommands(args);
  const sub = contributed.find((c) => c.parent === name && c.name === args[0]);
  if (sub) return sub.run(args.slice(1));
  const c = commands.find((x) => x.name === name) ?? contributed.find((x) => x.parent === undefined && x.name === name);
  if (!c) {
    process.stderr.write(`gateway: unknown command '${name}' (see 'gateway help')\n`);
    return 2;
  }
  return c.run(args);
}
