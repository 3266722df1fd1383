/**
 * The `orchd` command: the table of its subcommands, each in a file of its own with its flag table
 * (cli/flags.ts), loaded when it runs: serving loads none of the time-travel tools, and a
 * time-travel command none of the server. `orchd --help` and `orchd --version` load no command at
 * all: each command's one line is here, beside how to load it (a test checks it is the command's own).
 */
import { runCommand, type Command, type Io } from './flags.js';

interface Entry {
  /** The command's own summary, as its module says it (test/cli/orchd.test.ts holds them equal). */
  summary: string;
  load: () => Promise<Command>;
}

/** Each command, by name, in the order `orchd --help` lists them. */
export const COMMANDS: Record<string, Entry> = {
  serve: { summary: 'Serve the orch.io API over HTTP(S) on 127.0.0.1, with its log in a data folder (LevelDB), in memory or on etcd.', load: async () => (await import('./serve.js')).serveCommand },
  kubeconfig: { summary: 'Print a kubeconfig (YAML) for kubectl and other clients of the server at --server.', load: async () => (await import('./kubeconfig.js')).kubeconfigCommand },
  log: { summary: 'The changes of the log in order: version, commit time, event, object and who made it.', load: async () => (await import('./log.js')).logCommand },
  state: { summary: 'Every object as it was at a version or a time; or one object, named as RESOURCE/NAME.', load: async () => (await import('./state.js')).stateCommand },
  diff: { summary: 'What changed between two versions (or times), or between two histories (a fork and its original), object by object.', load: async () => (await import('./diff.js')).diffCommand },
  history: { summary: 'Every version of one object still in the log, with its diff, manager and time.', load: async () => (await import('./history.js')).historyCommand },
  export: { summary: 'Write a recording of the history from one version to another, to replay or read elsewhere.', load: async () => (await import('./export.js')).exportCommand },
  replay: {
    summary: "Serve a recording's (or a data folder's) changes again as a read-only API server, at the recorded pace or faster, for a controller to watch.",
    load: async () => (await import('./replay.js')).replayCommand,
  },
  fork: { summary: 'Make a new data folder holding the history up to a version, for a writable server to go on from it.', load: async () => (await import('./fork.js')).forkCommand },
  'rewrite-encryption': {
    summary: 'Re-encrypt every stored object with the first provider of the encryption configuration, offline, so an old key can be removed.',
    load: async () => (await import('./rewrite-encryption.js')).rewriteEncryptionCommand,
  },
};

/** `orchd --help`: every command with its one line. */
function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length)) + 3;
  const list = Object.entries(COMMANDS)
    .map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`)
    .join('\n');
  const flags = "  -h, --help      print this and exit\n      --version   print orchd's version and exit";
  return `usage: orchd COMMAND [flags]\n\nCommands:\n${list}\n\nFlags:\n${flags}\n\nRun 'orchd COMMAND --help' for a command's flags ('orchd serve --help' for the server's).\n`;
}

/** Runs the command the words name: its exit status. */
export async function runOrchd(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out.write(usage());
    return 0;
  }
  if (name === '--version' || name === 'version') {
    const { packageVersion } = await import('./version.js');
    io.out.write(`orchd ${packageVersion()}\n`);
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.err.write(`orchd: unknown command ${JSON.stringify(name)}\nRun 'orchd --help' for usage.\n`);
    return 2;
  }
  return runCommand(await entry.load(), rest, io);
}
