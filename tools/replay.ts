/**
 * Replays the log of a real orchd run as a watch stream, at the recorded pace, ten times faster or as
 * fast as possible, so a controller can be benchmarked against a realistic stream that is the same
 * every run. orchd's log is the recording: every write of the run is one entry.
 *
 *   node dist/tools/replay.js --data-dir DIR [--speed 1|10|max] [--port P] [--from SEQ] [--to SEQ]
 *                             [--watchers N] [--keep] [--encryption-provider-config FILE]
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
 * Pace: the log keeps no clock, so each entry's time is the newest time the server stamped into its
 * object (creation, deletion, managed fields), to the second; an entry with no newer time follows the
 * one before it at once. replay-pacing.ts says exactly how.
 *
 * --watchers N holds the replay until N watches are open (start the controller, and the stream
 * starts when its informers watch). The run's figures (entries, duration, rate) go to stdout at the
 * end; the tool then exits, or with --keep serves the final state until SIGINT/SIGTERM.
 * A recording encrypted at rest is read (and the served copy written) with the EncryptionConfiguration
 * it was written with, given as --encryption-provider-config; an entry no configured key opens stops
 * the replay with an error naming it.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Level } from 'level';
import { createApiServer, type ApiServer } from '../src/http/server.js';
import { jsonLogger, silentLogger, type Logger } from '../src/observability/logger.js';
import { Metrics } from '../src/observability/metrics.js';
import type { Authorizer } from '../src/auth/authorizer.js';
import type { EncryptionConfiguration } from '../src/config/encryption.js';
import { problemLine } from '../src/config/load.js';
import { loadServerConfig } from '../src/config/server-config.js';
import { seqKey } from '../src/log/codec.js';
import { encryptAtRest, type EncryptedLog } from '../src/log/encryption/index.js';
import { LevelDbLog, checkpointFile } from '../src/log/leveldb-log.js';
import type { LogEntry } from '../src/log/log.js';
import { kinds } from '../src/resources/registry.js';
import type { KubeObject } from '../src/resources/types.js';
import { Store } from '../src/store/store.js';
import { Pacer, parseSpeed, type Speed } from './replay-pacing.js';

export interface ReplayOptions {
  dataDir: string;
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
/** How long the tool waits for KMS plugins to answer before it gives up. */
const KMS_WAIT_MS = 30_000;

async function logFolderOf(dataDir: string): Promise<string> {
  const folder = join(dataDir, 'log');
  const s = await stat(folder).catch(() => undefined);
  if (!s?.isDirectory()) throw new Error(`--data-dir ${dataDir}: no orchd log there (no folder ${folder})`);
  return folder;
}

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

/** Opens a copy of the recorded log through the recording's encryption, once its KMS plugins answer. */
async function openLog(path: string, encryption: EncryptionConfiguration | undefined): Promise<EncryptedLog> {
  const log = encryptAtRest(new LevelDbLog({ path }), encryption);
  await log.open();
  if (!(await log.ready(KMS_WAIT_MS))) {
    await log.close();
    throw new Error(`the KMS plugins did not answer within ${KMS_WAIT_MS} ms: ${log.health().map((h) => h.problem).join('; ')}`);
  }
  return log;
}

export async function startReplay(opts: ReplayOptions): Promise<Replaying> {
  const recorded = await logFolderOf(opts.dataDir);
  const work = await mkdtemp(join(tmpdir(), 'orchd-replay-'));
  const opened: { close(): Promise<void> }[] = [];
  const cleanUp = async () => {
    for (const o of opened.reverse()) await o.close();
    await rm(work, { recursive: true, force: true });
  };
  try {
    const sourceDir = join(work, 'source');
    const servedDir = join(work, 'served');
    await cp(recorded, sourceDir, { recursive: true });
    const source = await openLog(sourceDir, opts.encryption);
    opened.push(source);
    const { from, to } = rangeOf(source, opts.dataDir, opts.from, opts.to);
    await cp(recorded, servedDir, { recursive: true });
    await cutBefore(servedDir, from);
    const log = await openLog(servedDir, opts.encryption);
    opened.push(log);
    const store = new Store({ log });
    opened.push(store);
    await store.start();
    const [corrupt] = log.corrupt.entries();
    if (corrupt) throw unreadable(corrupt[0], corrupt[1].seq, corrupt[1].message);
    const logger = opts.logger ?? silentLogger;
    const api = createApiServer({
      store,
      kinds,
      metrics: new Metrics(),
      logger,
      secret: randomBytes(32),
      ...(opts.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: opts.bookmarkIntervalMs } : {}),
      authorizer: readOnly,
    });
    await listen(api, opts.port ?? 0);
    opened.push(api);
    await api.start();
    const url = `http://127.0.0.1:${(api.http.address() as AddressInfo).port}`;
    let closed = false;
    const done = replayEntries({ source, store, api, from, to, speed: opts.speed, watchers: opts.watchers ?? 0, isClosed: () => closed });
    // Not a failure until someone asks: close() may stop the replay on purpose.
    done.catch(() => undefined);
    let closing: Promise<void> | undefined;
    return {
      url,
      initialVersion: from - 1,
      from,
      to,
      done,
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

/** Sleeps ms in short steps, so close() is not held up by a long gap of the recording. */
async function pause(ms: number, isClosed: () => boolean): Promise<void> {
  const until = performance.now() + ms;
  for (let left = ms; left > 0 && !isClosed(); left = until - performance.now()) await sleep(Math.min(left, POLL_MS * 5));
}

async function replayEntries(r: {
  source: EncryptedLog;
  store: Store;
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
  // Entries sent but not yet durable: sent together, they share one synced batch (group commit).
  let inFlight: Promise<void>[] = [];
  const write = (e: LogEntry): Promise<void> => {
    // The encrypted log hands on an entry it cannot open as a delete of its key: the replay stops there.
    const corrupt = r.source.corrupt.get(e.key);
    if (corrupt?.seq === e.seq) throw unreadable(e.key, e.seq, corrupt.message);
    const obj = e.value as KubeObject;
    // Nothing else writes to the served log, so the entry keeps its recorded seq (= resourceVersion).
    const stored = e.type === 'put' ? r.store.put(e.key, obj, r.store.latest(e.key) ? 'any' : 'absent') : r.store.remove(e.key, obj, 'any');
    return stored.then((s) => {
      if (s.seq !== e.seq) throw new Error(`log entry ${e.seq} (${e.key}) was replayed at ${s.seq}: the served log was written by something else`);
    });
  };
  for await (const page of r.source.read(r.from, r.to)) {
    for (const e of page) {
      if (r.isClosed()) throw stopped();
      const wait = pacer.dueMs(e.value) - (performance.now() - started);
      if (wait > 0) {
        await Promise.all(inFlight);
        inFlight = [];
        await pause(wait, r.isClosed);
        if (r.isClosed()) throw stopped();
      }
      inFlight.push(write(e));
      entries++;
    }
    // One page (at most 1000 entries) in flight at a time bounds the memory of a fast replay.
    await Promise.all(inFlight);
    inFlight = [];
  }
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

const USAGE = 'usage: replay --data-dir DIR [--speed 1|10|max] [--port P] [--from SEQ] [--to SEQ] [--watchers N] [--keep] [--encryption-provider-config FILE]';

function encryptionFrom(file: string | undefined): EncryptionConfiguration | undefined {
  if (file === undefined) return undefined;
  const loaded = loadServerConfig({ encryption: file });
  if (!loaded.ok) throw new Error(loaded.problems.map(problemLine).join('\n'));
  return loaded.config.encryption!.value;
}

export async function main(argv: string[] = process.argv.slice(2), out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      speed: { type: 'string', default: '1' },
      port: { type: 'string', default: '0' },
      from: { type: 'string' },
      to: { type: 'string' },
      watchers: { type: 'string', default: '0' },
      keep: { type: 'boolean', default: false },
      'encryption-provider-config': { type: 'string' },
    },
  });
  if (!values['data-dir']) throw new Error(`--data-dir is required\n${USAGE}`);
  const replay = await startReplay({
    dataDir: values['data-dir'],
    speed: parseSpeed(values.speed),
    port: integerFlag('port', values.port, 0)!,
    from: integerFlag('from', values.from, 1),
    to: integerFlag('to', values.to, 1),
    watchers: integerFlag('watchers', values.watchers, 0)!,
    logger: jsonLogger(process.stderr, 'warn'),
    encryption: encryptionFrom(values['encryption-provider-config']),
  });
  let interrupted!: () => void;
  const stop = new Promise<void>((resolve) => (interrupted = resolve));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    out.write(`serving ${replay.url}: the state at resourceVersion ${replay.initialVersion}, then entries ${replay.from}..${replay.to}\n`);
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
