import { accountsCommand } from './accounts';
import { keysCommand } from './keys';
import { dbCommand } from './db';

/**
 * Sub-commands beyond start/check (keys, accounts, bench...). Each is one entry here,
 * with its own file under src/cli/.
 */
export interface CliCommand {
  name: string;
  usage: string;
  summary: string;
  /** Lines for `gateway help`: each sub-command with its flags. */
  help?: string[];
  run(args: string[]): Promise<number>;
}

export const commands: CliCommand[] = [accountsCommand, keysCommand, dbCommand];

export async function runCommand(name: string, args: string[]): Promise<number> {
  const c = commands.find((x) => x.name === name);
  if (!c) {
    process.stderr.write(`gateway: unknown command '${name}' (see 'gateway help')\n`);
    return 2;
  }
  return c.run(args);
}
