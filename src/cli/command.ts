/**
 * A `gateway` sub-command beyond start/check: the core's own (keys, accounts, db: src/cli/commands.ts) or one a
 * plugin contributes in its definition (`cli: { commands: [...] }`), read from the plugins of the configured chain.
 */
export interface CliCommand {
  name: string;
  /**
   * For a plugin's sub-command of another command: that command's name (`gateway keys limits ...` is `name: 'limits'`
   * with `parent: 'keys'`), run with the arguments after its own name, its help lines listed under the parent's.
   */
  parent?: string;
  usage: string;
  summary: string;
  /** Lines for `gateway help`: each sub-command with its flags. */
  help?: string[];
  run(args: string[]): Promise<number>;
}
