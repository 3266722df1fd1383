/**
 * The time-travel subcommands of `orchd`: log, state, diff, history and export read a History from
 * --data-dir or --server and print (export: a recording, recording.ts); replay is ../replay.ts.
 * What only some commands need (the server's configuration loader, the HTTP reader, the replay
 * server, encryption at rest) is imported when they run: a command's own time includes node loading
 * modules, and the whole server took most of a short command's time.
 */
import { open as openFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { EncryptionConfiguration } from '../../src/config/encryption.js';
import type { KubeObject } from '../../src/resources/types.js';
import { collectionOfKind, makeFilter, parseVersionSpec, resolveKind, resolveVersion, stateInPages, TimeTravelError, type Change, type Filter, type History, type Stored } from './history.js';
import { jsonPatch, labelOf, managerOf, parseFormat, printChanges, printState, UsageError, formatTime, type Format } from './output.js';

export interface Io {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  err: NodeJS.WritableStream & { isTTY?: boolean };
}

const SOURCE = {
  'data-dir': { type: 'string' },
  server: { type: 'string' },
  'encryption-provider-config': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

const FILTERS = {
  kind: { type: 'string', multiple: true },
  namespace: { type: 'string', short: 'n' },
  selector: { type: 'string', short: 'l' },
} as const satisfies ParseArgsConfig['options'];

export const USAGE = `Time travel (each reads --data-dir D, a folder of a stopped or running orchd, or --server URL):
  orchd log     [--from RV|TIME] [--to RV|TIME] [--kind K] [-n NS] [-l SEL] [-o table|yaml|json] [--follow]
  orchd state   --at RV|TIME [--kind K] [-n NS] [-l SEL] [-o table|yaml|json]
  orchd diff    RV1|TIME1 RV2|TIME2 [--kind K] [-n NS] [-l SEL] [-o diff|json-patch]
  orchd history RESOURCE/NAME [-n NS] [-o diff|json-patch]
  orchd export  [--from RV|TIME] [--to RV|TIME] [--file F] > incident.orchlog
  orchd replay  incident.orchlog | --data-dir D [--port P] [--speed 1|10|max] [--pause-at RV] [--control-port P] [--watchers N] [--keep]
TIME is RFC 3339 (2026-11-26T02:14:00Z): the newest version committed at or before it.
`;

function parse<O extends ParseArgsConfig['options']>(args: string[], options: O, positionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: positionals > 0, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals])}`);
  return parsed;
}

async function encryptionFrom(file: string | undefined): Promise<EncryptionConfiguration | undefined> {
  if (file === undefined) return undefined;
  const { loadServerConfig } = await import('../../src/config/server-config.js');
  const { problemLine } = await import('../../src/config/load.js');
  const loaded = loadServerConfig({ encryption: file });
  if (!loaded.ok) throw new TimeTravelError(loaded.problems.map(problemLine).join('; '));
  return loaded.config.encryption!.value;
}

/** The history a command reads: exactly one of --data-dir and --server. */
export async function openHistory(values: { 'data-dir'?: string; server?: string; 'encryption-provider-config'?: string }): Promise<History> {
  if ((values['data-dir'] === undefined) === (values.server === undefined)) throw new UsageError('give exactly one of --data-dir and --server');
  if (values.server !== undefined) return (await import('./server.js')).openServer(values.server);
  const encryption = await encryptionFrom(values['encryption-provider-config']);
  return (await import('./data-dir.js')).openDataDir(values['data-dir']!, encryption);
}

async function withHistory<T>(values: Parameters<typeof openHistory>[0], io: Io, run: (h: History) => Promise<T>): Promise<T> {
  const history = await openHistory(values);
  try {
    const result = await run(history);
    // Said after the output, and only when there was some: an error stays one line.
    if (!history.timesFromLog) io.err.write(`orchd: note: times are taken from the objects' own timestamps (to the second), not from the log: ${values.server ? 'the API carries no commit times' : 'this log was written before it kept commit times'}\n`);
    return result;
  } finally {
    await history.close();
  }
}

const filterOf = (v: { kind?: string[]; namespace?: string; selector?: string }, name?: string): Filter => makeFilter({ kind: v.kind, namespace: v.namespace, selector: v.selector, name });

/**
 * Writes the pieces gathered into writes of about 1 MiB (one write per piece costs a system call
 * each), as the stream drains. Each piece is copied before the next is asked for, so a producer may
 * reuse its buffer; the chunks are reused once written (fresh ones each megabyte cost the kernel
 * more, their pages, than the copy).
 */
async function writeAll(out: NodeJS.WritableStream, pieces: AsyncIterable<string | Buffer> | Iterable<string | Buffer>): Promise<void> {
  const CHUNK = 1 << 20;
  const free: Buffer[] = [];
  let chunk: Buffer = Buffer.allocUnsafe(CHUNK);
  let size = 0;
  const flush = async () => {
    const full = chunk;
    const written = out.write(full.subarray(0, size), () => free.push(full));
    chunk = free.pop() ?? Buffer.allocUnsafe(CHUNK);
    size = 0;
    if (!written) await new Promise((r) => out.once('drain', r));
  };
  for await (const p of pieces) {
    const b = typeof p === 'string' ? Buffer.from(p) : p;
    for (let at = 0; at < b.length; ) {
      if (size === CHUNK) await flush();
      const n = b.copy(chunk, size, at);
      size += n;
      at += n;
    }
  }
  if (size > 0) await flush();
}

async function range(h: History, from: string | undefined, to: string | undefined): Promise<{ from: number; to: number }> {
  const f = from === undefined ? Math.max(h.oldest, 1) : await resolveVersion(h, '--from', parseVersionSpec('--from', from));
  const t = to === undefined ? h.head : await resolveVersion(h, '--to', parseVersionSpec('--to', to));
  if (f > t) throw new TimeTravelError(`--from ${f} is after --to ${t}`);
  return { from: f, to: t };
}

async function logCommand(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { ...SOURCE, ...FILTERS, from: { type: 'string' }, to: { type: 'string' }, output: { type: 'string', short: 'o' }, follow: { type: 'boolean' } });
  const format = parseFormat(values.output, ['table', 'yaml', 'json']) as Format;
  const filter = filterOf(values);
  if (values.follow && values.to !== undefined) throw new UsageError('--follow goes on past the head: it takes no --to');
  let last = await withHistory(values, io, async (h) => {
    const { from, to } = await range(h, values.from, values.to);
    await writeAll(io.out, printChanges(h.changes(from, to, filter), format, h.timesFromLog));
    return to;
  });
  // --follow: what was written since, once a second, until interrupted.
  while (values.follow) {
    await new Promise((r) => setTimeout(r, 1000));
    const history = await openHistory(values);
    try {
      if (history.head > last) await writeAll(io.out, printChanges(history.changes(last + 1, history.head, filter), format, history.timesFromLog, false));
      last = history.head;
    } finally {
      await history.close();
    }
  }
  return 0;
}

async function stateCommand(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { ...SOURCE, ...FILTERS, at: { type: 'string' }, output: { type: 'string', short: 'o' } });
  if (values.at === undefined) throw new UsageError('--at RV|TIME is required');
  const format = parseFormat(values.output, ['table', 'yaml', 'json']) as Format;
  const filter = filterOf(values);
  return withHistory(values, io, async (h) => {
    const rv = await resolveVersion(h, '--at', parseVersionSpec('--at', values.at!));
    await writeAll(io.out, printState(rv, stateInPages(h, rv, filter), format));
    return 0;
  });
}

async function diffCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...SOURCE, ...FILTERS, output: { type: 'string', short: 'o' } }, 2);
  if (positionals.length !== 2) throw new UsageError('diff takes two versions: RV1|TIME1 RV2|TIME2');
  const format = parseFormat(values.output, ['diff', 'json-patch']);
  const filter = filterOf(values);
  return withHistory(values, io, async (h) => {
    const a = await resolveVersion(h, 'RV1', parseVersionSpec('RV1', positionals[0]));
    const b = await resolveVersion(h, 'RV2', parseVersionSpec('RV2', positionals[1]));
    await writeAll(io.out, printDiff(h, a, b, filter, format, io.out.isTTY === true));
    return 0;
  });
}

/**
 * The objects that differ between the states at a and b, as the two states are read side by side
 * (each in key order, a kind at a time): neither is held whole, and an object whose revision is the
 * same in both is not decoded.
 */
async function* printDiff(h: History, a: number, b: number, filter: Filter, format: string, tty: boolean): AsyncIterable<string> {
  const yaml = format === 'diff' ? await import('./yaml-diff.js') : undefined;
  for (const kind of [...filter.kinds].sort((x, y) => (collectionOfKind(x) < collectionOfKind(y) ? -1 : 1))) {
    const one = { ...filter, kinds: [kind] };
    for await (const [key, x, y] of pairs(stateInPages(h, a, one), stateInPages(h, b, one))) {
      if (x && y && (x.seq ?? x.object.metadata.resourceVersion) === (y.seq ?? y.object.metadata.resourceVersion)) continue;
      if (!yaml) {
        const patch = jsonPatch(x?.object, y?.object);
        if (patch.length > 0) yield JSON.stringify({ object: labelOf(key), from: String(a), to: String(b), patch }) + '\n';
      } else {
        const d = yaml.unifiedDiff(labelOf(key), x?.object, y?.object, a, b);
        if (d) yield tty ? yaml.colour(d) : d;
      }
    }
  }
}

/** Two streams of objects in key order, merged: each key with what each holds (undefined where it has none). */
async function* pairs(xs: AsyncIterable<Stored[]>, ys: AsyncIterable<Stored[]>): AsyncIterable<[string, Stored | undefined, Stored | undefined]> {
  const left = cursor(xs);
  const right = cursor(ys);
  let x = await left.next();
  let y = await right.next();
  while (x || y) {
    if (!y || (x && x.key < y.key)) {
      yield [x!.key, x, undefined];
      x = await left.next();
    } else if (!x || y.key < x.key) {
      yield [y.key, undefined, y];
      y = await right.next();
    } else {
      yield [x.key, x, y];
      x = await left.next();
      y = await right.next();
    }
  }
}

/** One object at a time from pages of them; undefined at the end. */
function cursor(pages: AsyncIterable<Stored[]>): { next(): Promise<Stored | undefined> } {
  const it = pages[Symbol.asyncIterator]();
  let page: Stored[] = [];
  let i = 0;
  return {
    async next() {
      while (i >= page.length) {
        const r = await it.next();
        if (r.done) return undefined;
        page = r.value;
        i = 0;
      }
      return page[i++];
    },
  };
}

async function historyCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...SOURCE, namespace: FILTERS.namespace, output: { type: 'string', short: 'o' } }, 1);
  const [target] = positionals;
  const slash = target?.indexOf('/') ?? -1;
  if (!target || slash <= 0 || slash === target.length - 1) throw new UsageError('history takes RESOURCE/NAME (e.g. events/e1, namespaces/default)');
  const kind = resolveKind(target.slice(0, slash));
  const name = target.slice(slash + 1);
  if (kind.namespaced && values.namespace === undefined) throw new UsageError(`${kind.plural} are namespaced: give -n NAMESPACE`);
  const format = parseFormat(values.output, ['diff', 'json-patch']);
  const key = `${kind.group}/${kind.plural}/${kind.namespaced ? values.namespace : ''}/${name}`;
  return withHistory(values, io, async (h) => {
    const versions = await h.versionsOf(key);
    if (versions.length === 0) throw new TimeTravelError(`${target}${kind.namespaced ? ` in namespace ${values.namespace}` : ''}: no version of it in the log (from version ${Math.max(h.oldest, 1)} to ${h.head})`);
    await writeAll(io.out, printHistory(versions, format, h.timesFromLog, io.out.isTTY === true));
    return 0;
  });
}

/** Each version of an object with what changed since the one before. */
async function* printHistory(versions: Change[], format: string, timesFromLog: boolean, tty: boolean): AsyncIterable<string> {
  const yaml = format === 'diff' ? await import('./yaml-diff.js') : undefined;
  let before: Change | undefined;
  for (const c of versions) {
    // A delete's value is the object's last state: its diff is the object going away.
    const prev = before?.type === 'DELETED' ? undefined : before?.object;
    const next: KubeObject | undefined = c.type === 'DELETED' ? undefined : c.object;
    if (!yaml) {
      yield JSON.stringify({ resourceVersion: String(c.rv), time: c.time === undefined ? null : formatTime(c.time, timesFromLog), type: c.type, manager: managerOf(c, prev), patch: jsonPatch(prev, next) }) + '\n';
    } else {
      const head = `# ${c.rv}   ${formatTime(c.time, timesFromLog)}   ${c.type}   ${managerOf(c, prev)}\n`;
      const body = yaml.hunks(prev, next);
      yield tty ? yaml.colour(head + body) : head + body;
    }
    before = c;
  }
}

async function exportCommand(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { ...SOURCE, from: { type: 'string' }, to: { type: 'string' }, file: { type: 'string', short: 'f' } });
  if (values.file === undefined && io.out.isTTY) throw new UsageError('a recording is binary: redirect it to a file (> incident.orchlog) or give --file');
  const { writeRecording } = await import('./recording.js');
  const { progress } = await import('./progress.js');
  return withHistory(values, io, async (h) => {
    const { from, to } = await range(h, values.from, values.to);
    const fh = values.file === undefined ? undefined : await openFile(values.file, 'w');
    const bar = progress(to - from, 'export');
    let chunks: Buffer[] = [];
    let size = 0;
    // Records are gathered into writes of up to 1 MiB: one write per record would cost a system call each.
    const flush = async () => {
      const gathered = chunks;
      chunks = [];
      size = 0;
      // To a file, one vectored write of the pieces (no copy into one buffer).
      if (fh) await fh.writev(gathered);
      else if (!io.out.write(Buffer.concat(gathered))) await new Promise((r) => io.out.once('drain', r));
    };
    try {
      const n = await writeRecording(h, from, to, (b) => {
        chunks.push(b);
        size += b.length;
        // Fewer pieces than a vectored write takes at once (IOV_MAX, 1024 on Linux).
        if (size >= 1 << 20 || chunks.length >= 1000) return flush();
      }, (rv) => bar.update(rv - from));
      await flush();
      await fh?.sync();
      bar.stop();
      io.err.write(`orchd export: the state at ${from} and ${n} entries to ${to}${values.file ? ` written to ${values.file}` : ''}\n`);
    } finally {
      await fh?.close();
    }
    return 0;
  });
}

async function replayCommand(args: string[], io: Io): Promise<number> {
  try {
    return await (await import('../replay.js')).main(args, io.out);
  } catch (err) {
    // Its flags and its recording: both one line (parseArgs says what was wrong with the flags).
    if (err instanceof TimeTravelError) throw err;
    throw new TimeTravelError(err instanceof Error ? err.message.split('\n')[0] : String(err));
  }
}

export const TIME_TRAVEL_COMMANDS: Record<string, (args: string[], io: Io) => Promise<number>> = {
  log: logCommand,
  state: stateCommand,
  diff: diffCommand,
  history: historyCommand,
  export: exportCommand,
  replay: replayCommand,
};

/**
 * Runs one time-travel subcommand: its exit status. A mistake of the user's (a bad version, an
 * unknown kind, a bad recording) is one line on stderr and 1; a bad command line, 2.
 */
export async function runTimeTravel(command: string, args: string[], io: Io = { out: process.stdout, err: process.stderr }): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out.write(USAGE);
    return 0;
  }
  try {
    return await TIME_TRAVEL_COMMANDS[command](args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err.write(`orchd ${command}: ${err.message}\nRun 'orchd ${command} --help' for usage.\n`);
      return 2;
    }
    if (err instanceof TimeTravelError) {
      io.err.write(`orchd ${command}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
