/**
 * Replays the log of a real orchd run as a watch stream, at the recorded pace, ten times faster or as
 * fast as possible, so a controller can be benchmarked against a realistic stream that is the same
 * every run. orchd's log is the recording: every write of the run is one entry.
 *
 *   orchd replay RECORDING | --data-dir DIR [--speed 1|10|max] [--port P] [--from SEQ] [--to SEQ]
 *                [--watchers N] [--pause-at RV] [--control-port P] [--keep] [--encryption-provider-config FILE]
 *   (also: node dist/tools/replay.js …)
 *
 * A recording (`orchd export`, timetravel/recording.ts) is served the same way: its snapshot is
 * written into a new log at the objects' own versions below a compaction horizon at --from, so the
 * served state at --from is the recorded one with its resourceVersions, and its entries are replayed
 * after it.
 *
 * How: the recording's log folder is copied twice into a temp folder (the recording itself is never
 * opened, so it is never changed; stop orchd first, or copy a stopped server's folder, since a copy of
 * a LevelDB being written may be torn). One copy is the source. The other is cut back to the state
 * just before --from and served by a real orchd API server on 127.0.0.1: discovery, OpenAPI, get,
 * list, watch (HTTP and WebSocket), bookmarks, tables, exactly as orchd serves them. The source's
 * entries from --from to --to are then written into the served log one by one at the chosen pace, so
 * each lands at its recorded sequence number: a controller listing and watching the replay server sees
 * the recorded objects, events and resourceVersions, in the recorded order. The server makes no
 * writes of its own (no system namespaces, bootstrap RBAC or controllers) and answers every request
 * but get, list and watch with 403, so nothing else gets into the stream.
 *
 * Pace: each entry's commit time, which the log keeps; for a log written before it kept them, the
 * newest time the server stamped into the object (creation, deletion, managed fields), to the second.
 * replay-pacing.ts says exactly how. Entries go in pages (a read of the recording, ~4 MiB; 1000 log
 * entries of a data folder), each one batch of the served log, and the next page waits until every
 * connection has sent what it was handed (or a minute has passed): at --speed max the replay goes as
 * fast as its watchers read, and none is sent back to the log to catch up.
 *
 * Controls (ReplayControl): pause, resume, step one entry, jump to a version (the entries up to it go
 * at once), over a small HTTP endpoint on 127.0.0.1 (--control-port: POST /pause, /resume, /step,
 * /jump?to=RV; GET /status) and, on a terminal, its keys (space: pause/resume, s: step, e: jump to
 * the end, q: quit). --pause-at RV pauses before the first entry past RV.
 *
 * --watchers N holds the replay until N watches are open (start the controller, and the stream
 * starts when its informers watch). The run's figures (entries, duration, rate) go to stdout at the
 * end; the tool then exits, or with --keep serves the final state until SIGINT/SIGTERM.
 * A recording encrypted at rest is read (and the served copy written) with the EncryptionConfiguration
 * it was written with, given as --encryption-provider-config; an entry no configured key opens stops
 * the replay with an error naming it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Level } from 'level';
import { createApiServer, type ApiServer } from '../src/http/server.js';
import { buildRegistry } from '../src/registry/build.js';
import { jsonLogger, silentLogger, type Logger } from '../src/observability/logger.js';
import { Metrics } from '../src/observability/metrics.js';
import type { Authorizer } from '../src/auth/authorizer.js';
import type { EncryptionConfiguration } from '../src/config/encryption.js';
import { problemLine } from '../src/config/load.js';
import { loadServerConfig } from '../src/config/server-config.js';
import { HORIZON_KEY, encodeRecord, seqKey } from '../src/log/codec.js';
import type { EncryptedLog } from '../src/log/encryption/index.js';
import { checkpointFile, LevelDbLog } from '../src/log/leveldb-log.js';
import type { LogEntry } from '../src/log/log.js';
import { kinds } from '../src/resources/registry.js';
import type { KubeObject } from '../src/resources/types.js';
import { Store } from '../src/store/store.js';
import { Pacer, parseSpeed, type Speed } from './replay-pacing.js';
import { ReplayControl, serveControl, terminalKeys } from './timetravel/replay-control.js';
import { logFolderOf, openLogCopy } from './timetravel/data-dir.js';
import { snapshotLogFolder } from './timetravel/log-snapshot.js';
import { openRecording } from './timetravel/recording.js';
import { progress } from './timetravel/progress.js';

export interface ReplayOptions {
  /** A data folder to replay the log of, or (instead) a recording file. */
  dataDir?: string;
  recording?: string;
  /** Pause before the first entry past this version. */
  pauseAt?: number;
  speed: Speed;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** First entry replayed; default the recording's first readable one. */
  from?: number;
  /** Last entry replayed; default the recording's last. */
  to?: number;
  /** Hold the replay until this many watches are open. */
  watchers?: number;
  logger?: Logger;
  bookmarkIntervalMs?: number;
  /** How the recording was encrypted at rest, if it was. */
  encryption?: EncryptionConfiguration;
}

export interface ReplayReport {
  entries: number;
  from: number;
  to: number;
  speed: Speed;
  /** From the first entry sent to the last one durable. */
  durationMs: number;
  entriesPerSecond: number;
  /** The span of the replayed entries' stamped times: what speed 1 takes, to the second. */
  recordedSpanMs: number;
}

export interface Replaying {
  url: string;
  /** The served state before the first replayed entry: list at it, then watch from it. */
  initialVersion: number;
  from: number;
  to: number;
  /** Settles when the last entry is durable; rejects if the replay failed or was closed early. */
  done: Promise<ReplayReport>;
  control: ReplayControl;
  close(): Promise<void>;
}

/** The replay server is read-only, like a user bound to the `view` role. */
const readOnly: Authorizer = {
  authorize: (a) =>
    a.verb === 'get' || a.verb === 'list' || a.verb === 'watch'
      ? { decision: 'allow' }
      : { decision: 'noOpinion', reason: 'the replay server serves a recorded log: only get, list and watch' },
};

/** How often --watchers looks at the open watches, and the longest sleep between checks for close(). */
const POLL_MS = 20;

/** The range to replay, checked against what the recording holds. */
function rangeOf(source: EncryptedLog, dataDir: string, from?: number, to?: number): { from: number; to: number } {
  if (source.lastSeq === 0 || source.firstSeq > source.lastSeq) throw new Error(`--data-dir ${dataDir}: the recording holds no log entries`);
  const f = from ?? source.firstSeq;
  const t = to ?? source.lastSeq;
  if (f < source.firstSeq) throw new Error(`--from ${f}: the recording was compacted, its history starts at ${source.firstSeq}`);
  if (t > source.lastSeq) throw new Error(`--to ${t}: the recording ends at ${source.lastSeq}`);
  if (f > t) throw new Error(`--from ${f} is after --to ${t}`);
  return { from: f, to: t };
}

/**
 * Cuts a copy of the log back to the state before seq `from`: what comes later is replayed into it.
 * The checkpoint goes too, since it may hold a later state; the served store rebuilds from the log.
 */
async function cutBefore(folder: string, from: number): Promise<void> {
  const db = new Level<Buffer, Buffer>(folder, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  try {
    await db.clear({ gte: seqKey(from), lte: seqKey(Number.MAX_SAFE_INTEGER) });
  } finally {
    await db.close();
  }
  await rm(checkpointFile(folder), { force: true });
}

const unreadable = (key: string, seq: number, message: string): Error =>
  new Error(`log entry ${seq} (${key}) cannot be read: ${message} (an encrypted recording needs the --encryption-provider-config it was written with)`);

/** Where the entries come from, and the served log folder prepared with the state before them. */
interface Source {
  from: number;
  to: number;
  pages: AsyncIterable<LogEntry[]>;
  /** Throws when an entry cannot be replayed (one the recording's keys do not open). */
  check(e: LogEntry): void;
  /**
   * A recording's entries are written into the served log as the bytes they were recorded as
   * (LevelDbLog.appendStored), a page at a time, into a log without encryption at rest (the
   * recording holds plaintext, and the served copy is a temp folder). A data folder's go through
   * the store's put, through the encryption at rest its log was written with.
   */
  storedBytes: boolean;
}

/** A data folder: one copy is read, another is cut back to before --from and served. */
async function dataDirSource(opts: ReplayOptions, dataDir: string, work: string, servedDir: string, opened: { close(): Promise<void> }[]): Promise<Source> {
  const recorded = await logFolderOf(dataDir);
  const sourceDir = join(work, 'source');
  await snapshotLogFolder(recorded, sourceDir);
  const source = await openLogCopy(sourceDir, opts.encryption);
  opened.push(source);
  const { from, to } = rangeOf(source, dataDir, opts.from, opts.to);
  await snapshotLogFolder(sourceDir, servedDir);
  await cutBefore(servedDir, from);
  return { from, to, pages: source.read(from, to), check: (e) => checkOpened(source, e), storedBytes: false };
}

function checkOpened(source: EncryptedLog, e: LogEntry): void {
  // The encrypted log hands on an entry it cannot open as a delete of its key: the replay stops there.
  const corrupt = source.corrupt.get(e.key);
  if (corrupt?.seq === e.seq) throw unreadable(e.key, e.seq, corrupt.message);
}

/**
 * A recording: its snapshot is written into a new log at each object's own version, below a
 * compaction horizon just past the snapshot's version, so the served store starts at that version
 * with the recorded objects and resourceVersions; the entries follow, read from the file while they
 * are replayed.
 */
async function recordingSource(opts: ReplayOptions, file: string, servedDir: string, opened: { close(): Promise<void> }[]): Promise<Source> {
  const rec = await openRecording(file);
  opened.push(rec);
  const at = rec.header.from;
  const db = new Level<Buffer, Buffer>(servedDir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  try {
    const batch = db.batch();
    for (const [key, object] of rec.snapshot) batch.put(seqKey(Number(object.metadata.resourceVersion)), encodeRecord({ type: 'put', key, value: object }));
    batch.put(HORIZON_KEY, seqKey(at + 1));
    await batch.write({ sync: true });
  } finally {
    await db.close();
  }
  const last = rec.header.to;
  const from = opts.from ?? at + 1;
  const to = opts.to ?? last;
  if (from !== at + 1) throw new Error(`--from ${from}: a recording replays from just after its snapshot (${at + 1})`);
  if (to > last) throw new Error(`--to ${to}: the recording ends at ${last}`);
  return { from, to, pages: rec.pages, check: () => {}, storedBytes: true };
}

export async function startReplay(opts: ReplayOptions): Promise<Replaying> {
  if ((opts.dataDir === undefined) === (opts.recording === undefined)) throw new Error('give a recording or --data-dir (one of them)');
  const work = await mkdtemp(join(tmpdir(), 'orchd-replay-'));
  const opened: { close(): Promise<void> }[] = [];
  const cleanUp = async () => {
    for (const o of opened.reverse()) await o.close();
    await rm(work, { recursive: true, force: true });
  };
  try {
    const servedDir = join(work, 'served');
    const source = opts.recording !== undefined ? await recordingSource(opts, opts.recording, servedDir, opened) : await dataDirSource(opts, opts.dataDir!, work, servedDir, opened);
    const { from, to } = source;
    // The served log lives in a temp folder removed on close: a synced write per batch bought nothing.
    const log = source.storedBytes ? new LevelDbLog({ path: servedDir, sync: false }) : await openLogCopy(servedDir, opts.encryption, false);
    opened.push(log);
    if (log instanceof LevelDbLog) await log.open();
    // Never restarted (its folder goes on close): a checkpoint every 100k entries was work for nothing.
    const store = new Store({ log, checkpointEvery: Number.MAX_SAFE_INTEGER });
    opened.push(store);
    await store.start();
    const [corrupt] = log instanceof LevelDbLog ? [] : log.corrupt.entries();
    if (corrupt) throw unreadable(corrupt[0], corrupt[1].seq, corrupt[1].message);
    const logger = opts.logger ?? silentLogger;
    const api = createApiServer({
      objects: buildRegistry(store, kinds, { logger, secret: randomBytes(32), authorizer: readOnly }),
      kinds,
      metrics: new Metrics(),
      logger,
      ...(opts.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: opts.bookmarkIntervalMs } : {}),
      authorizer: readOnly,
    });
    const connections = openConnections(api);
    await listen(api, opts.port ?? 0);
    opened.push(api);
    await api.start();
    const url = `http://127.0.0.1:${(api.http.address() as AddressInfo).port}`;
    let closed = false;
    const control = new ReplayControl(from - 1, opts.pauseAt);
    const writer = log instanceof LevelDbLog ? storedWriter(log) : storeWriter(store, source);
    const drained = () => connectionsDrained(connections, () => closed);
    const done = replayEntries({ source, writer, drained, api, from, to, speed: opts.speed, watchers: opts.watchers ?? 0, control, isClosed: () => closed });
    // Not a failure until someone asks: close() may stop the replay on purpose.
    done.catch(() => undefined);
    let closing: Promise<void> | undefined;
    return {
      url,
      initialVersion: from - 1,
      from,
      to,
      done,
      control,
      close: () =>
        (closing ??= (async () => {
          closed = true;
          await done.catch(() => undefined);
          await cleanUp();
        })()),
    };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}

function listen(api: ApiServer, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    api.http.once('error', reject);
    api.http.listen(port, '127.0.0.1', () => {
      api.http.off('error', reject);
      resolve();
    });
  });
}

/** The server's open connections (each watcher's among them). */
function openConnections(api: ApiServer): Set<Socket> {
  const open = new Set<Socket>();
  api.http.on('connection', (s: Socket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  return open;
}

/**
 * Bytes a connection may hold unsent before the replay waits for it: a watch's high-water mark
 * (watch-stream.ts). A page of a recording is megabytes of events, more than a watcher may have
 * unsent before the server stops handing it live changes and sends it back to the log to catch up
 * (slower, and at the end of a replay it had not caught up when the server closed).
 */
const DRAIN_BELOW = 64 * 1024;
/** A peer that stops reading holds the replay up this long at most (the server then ends its watch as stalled). */
const DRAIN_MAX_MS = 60_000;

/** Resolves once every connection has sent what it held beyond DRAIN_BELOW (or closed, or took too long). */
async function connectionsDrained(connections: Set<Socket>, isClosed: () => boolean): Promise<void> {
  for (const s of connections) {
    if (isClosed()) return;
    if (s.destroyed || s.writableLength <= DRAIN_BELOW) continue;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        s.off('drain', done);
        s.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, DRAIN_MAX_MS);
      s.on('drain', done);
      s.on('close', done);
    });
  }
}

/** Sleeps ms in short steps, so close() is not held up by a long gap of the recording. */
async function pause(ms: number, isClosed: () => boolean): Promise<void> {
  const until = performance.now() + ms;
  for (let left = ms; left > 0 && !isClosed(); left = until - performance.now()) await sleep(Math.min(left, POLL_MS * 5));
}

/** Writes replayed entries into the served log: add() each, flush() to wait until they are durable. */
interface Writer {
  add(e: LogEntry): void;
  flush(): Promise<void>;
}

const replayedAt = (e: LogEntry, seq: number): Error =>
  new Error(`log entry ${e.seq} (${e.key}) was replayed at ${seq}: the served log was written by something else`);

/** Through the store's put, one entry at a time (a data folder's entries, opened from encryption at rest). */
function storeWriter(store: Store, source: Source): Writer {
  let inFlight: Promise<void>[] = [];
  return {
    add(e) {
      source.check(e);
      const obj = e.value as KubeObject;
      // Nothing else writes to the served log, so the entry keeps its recorded seq (= resourceVersion).
      const stored = e.type === 'put' ? store.put(e.key, obj, store.latest(e.key) ? 'any' : 'absent') : store.remove(e.key, obj, 'any');
      inFlight.push(
        stored.then((s) => {
          if (s.seq !== e.seq) throw replayedAt(e, s.seq);
        }),
      );
    },
    async flush() {
      const waiting = inFlight;
      inFlight = [];
      await Promise.all(waiting);
    },
  };
}

/** The recorded bytes as they are, each flush one batch of the served log (a recording's entries). */
function storedWriter(log: LevelDbLog): Writer {
  let batch: LogEntry[] = [];
  return {
    add(e) {
      // The log gives out seqs in order without gaps: an entry out of line would land at another version.
      const expected = (batch.length > 0 ? batch[batch.length - 1].seq : log.lastSeq) + 1;
      if (e.seq !== expected) throw replayedAt(e, expected);
      batch.push(e);
    },
    async flush() {
      if (batch.length === 0) return;
      const entries = batch;
      batch = [];
      const { seq, durable } = log.appendStored(entries as { type: LogEntry['type']; key: string; raw: Buffer }[]);
      if (seq !== entries[0].seq) throw replayedAt(entries[0], seq);
      await durable;
    },
  };
}

async function replayEntries(r: {
  source: Source;
  control: ReplayControl;
  writer: Writer;
  /** Waits until the watchers' connections have sent what they were handed. */
  drained: () => Promise<void>;
  api: ApiServer;
  from: number;
  to: number;
  speed: Speed;
  watchers: number;
  isClosed: () => boolean;
}): Promise<ReplayReport> {
  const stopped = () => new Error('the replay was closed before it finished');
  while (r.api.context.watches.size < r.watchers) {
    if (r.isClosed()) throw stopped();
    await sleep(POLL_MS);
  }
  const pacer = new Pacer(r.speed);
  const started = performance.now();
  let entries = 0;
  // Entries sent but not yet durable: sent together, they share one batch (group commit).
  const { writer } = r;
  // A pause or a jump moves the clock: entries are due relative to `started`, shifted by the time spent paused.
  let shift = 0;
  const bar = progress(r.to - r.from + 1, 'replay');
  try {
    pages: for await (const page of r.source.pages) {
      for (const e of page) {
        if (r.isClosed()) throw stopped();
        // A recording is read to its end unless --to stops it earlier.
        if (e.seq > r.to) break pages;
        // The value is decoded only when the entry carries no commit time (an old log's).
        const due = pacer.dueMs(e.time === undefined ? e.value : undefined, e.time);
        // Until the entry is due and not held: a pause during a gap holds it too.
        for (;;) {
          if (r.control.mustWait(e.seq)) {
            await writer.flush();
            const t = performance.now();
            await r.control.waitFor(e.seq, r.isClosed);
            shift += performance.now() - t;
          }
          if (r.isClosed()) throw stopped();
          // A jump or a step sends at once, and what follows keeps its recorded spacing from there.
          if (r.control.jumping(e.seq) || r.control.stepping()) shift = Math.max(shift, performance.now() - started - due);
          const wait = due - (performance.now() - started - shift);
          if (wait <= 0) break;
          await writer.flush();
          await pause(wait, () => r.isClosed() || r.control.mustWait(e.seq) || r.control.jumping(e.seq));
        }
        writer.add(e);
        r.control.sent(e.seq);
        entries++;
      }
      // One page (a read of the recording, or 1000 log entries) in flight at a time bounds the memory
      // of a fast replay; the next waits until the watchers have sent this one, so none falls behind.
      await writer.flush();
      await r.drained();
      bar.update(entries);
    }
  } finally {
    bar.stop();
  }
  await writer.flush();
  await r.drained();
  const durationMs = performance.now() - started;
  return {
    entries,
    from: r.from,
    to: r.to,
    speed: r.speed,
    durationMs,
    entriesPerSecond: durationMs > 0 ? (entries * 1000) / durationMs : entries,
    recordedSpanMs: pacer.spanMs,
  };
}

/** A whole number of at least min, or an error naming the flag. */
function integerFlag(name: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) throw new Error(`--${name}: must be a whole number of at least ${min}, not ${JSON.stringify(text)}`);
  return n;
}

export const formatReport = (r: ReplayReport): string =>
  `replayed ${r.entries} entries (seq ${r.from}..${r.to}) at speed ${r.speed === 'max' ? 'max' : `${r.speed}x`} in ${(r.durationMs / 1000).toFixed(3)} s: ` +
  `${Math.round(r.entriesPerSecond)} entries/s (recorded span ${(r.recordedSpanMs / 1000).toFixed(0)} s)`;

const USAGE =
  'usage: replay RECORDING | --data-dir DIR [--speed 1|10|max] [--port P] [--from SEQ] [--to SEQ] [--watchers N] [--pause-at RV] [--control-port P] [--keep] [--encryption-provider-config FILE]';

function encryptionFrom(file: string | undefined): EncryptionConfiguration | undefined {
  if (file === undefined) return undefined;
  const loaded = loadServerConfig({ encryption: file });
  if (!loaded.ok) throw new Error(loaded.problems.map(problemLine).join('\n'));
  return loaded.config.encryption!.value;
}

export async function main(argv: string[] = process.argv.slice(2), out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      speed: { type: 'string', default: '1' },
      port: { type: 'string', default: '0' },
      from: { type: 'string' },
      to: { type: 'string' },
      watchers: { type: 'string', default: '0' },
      'pause-at': { type: 'string' },
      'control-port': { type: 'string' },
      keep: { type: 'boolean', default: false },
      'encryption-provider-config': { type: 'string' },
    },
  });
  if (positionals.length > 1) throw new Error(`one recording at a time, not ${positionals.length}\n${USAGE}`);
  if ((values['data-dir'] === undefined) === (positionals[0] === undefined)) throw new Error(`give a recording or --data-dir (one of them)\n${USAGE}`);
  const replay = await startReplay({
    dataDir: values['data-dir'],
    recording: positionals[0],
    speed: parseSpeed(values.speed),
    port: integerFlag('port', values.port, 0)!,
    from: integerFlag('from', values.from, 1),
    to: integerFlag('to', values.to, 1),
    watchers: integerFlag('watchers', values.watchers, 0)!,
    pauseAt: integerFlag('pause-at', values['pause-at'], 0),
    logger: jsonLogger(process.stderr, 'warn'),
    encryption: encryptionFrom(values['encryption-provider-config']),
  });
  let interrupted!: () => void;
  const stop = new Promise<void>((resolve) => (interrupted = resolve));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const controls = values['control-port'] === undefined ? undefined : await serveControl(replay.control, integerFlag('control-port', values['control-port'], 0)!);
  const keys = terminalKeys(replay.control, interrupted);
  try {
    out.write(`serving ${replay.url}: the state at resourceVersion ${replay.initialVersion}, then entries ${replay.from}..${replay.to}\n`);
    if (controls) out.write(`controls at ${controls.url}: POST /pause, /resume, /step, /jump?to=RV; GET /status\n`);
    const report = await Promise.race([replay.done, stop.then(() => undefined)]);
    if (!report) return 130;
    out.write(formatReport(report) + '\n');
    if (values.keep) {
      out.write(`serving the final state at ${replay.url} until interrupted\n`);
      await stop;
    }
    return 0;
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    keys.close();
    await controls?.close();
    await replay.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`replay: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
