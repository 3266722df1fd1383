/**
 * The `orchd` command: the table of its subcommands, each in a file of its own with its flag table
 * (cli/flags.ts), loaded when it runs: serving loads none of the time-travel tools, and a
 * time-travel command none of the server.
 */
import { runCommand, usageOf, type Command, type Io } from './flags.js';

/** Each command's module, by name, in the order `orchd --help` lists them. */
export const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serveCommand,
  kubeconfig: async () => (await import('./kubeconfig.js')).kubeconfigCommand,
  log: async () => (await import('./log.js')).logCommand,
  state: async () => (await import('./state.js')).stateCommand,
  diff: async () => (await import('./diff.js')).diffCommand,
  history: async () => (await import('./history.js')).historyCommand,
  export: async () => (await import('./export.js')).exportCommand,
  replay: async () => (await import('./replay.js')).replayCommand,
  fork: async () => (await import('./fork.js')).forkCommand,
  'rewrite-encryption': async () => (await import('./rewrite-encryption.js')).rewriteEncryptionCommand,
};

/** `orchd --help`: every command with its summary, then how to serve. */
async function usage(): Promise<string> {
  const commands = await Promise.all(Object.values(COMMANDS).map((load) => load()));
  const width = Math.max(...commands.map((c) => c.name.length)) + 3;
  const list = commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join('\n');
  return `usage: orchd COMMAND [flags]   (orchd COMMAND --help says more)\n\nCommands:\n${list}\n\n${usageOf(commands[0])}`;
}

/** Runs the command the words name: its exit status. */
export async function runOrchd(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out.write(await usage());
    return 0;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    io.err.write(`orchd: unknown command ${JSON.stringify(name)}\nRun 'orchd --help' for usage.\n`);
    return 2;
  }
  return runCommand(await load(), rest, io);
}
