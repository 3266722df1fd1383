/**
 * A replay: a history's entries served again as a watch stream, at the recorded pace, ten times
 * faster or as fast as its watchers read, so a controller can be tried against a realistic stream
 * that is the same every run.
 *
 * The source is a History (a data folder, a recording), served by a real orchd API server on
 * 127.0.0.1 (discovery, OpenAPI, get, list, watch over HTTP and WebSocket, bookmarks, tables) whose
 * log is the source itself (log.ts): its state just before --from (each object at its own
 * resourceVersion, below a horizon at --from), then the source's entries from --from to --to, each
 * revealed at its recorded sequence number as the bytes it was stored as (loop.ts). A
 * controller listing and watching the replay server sees the recorded objects, events and
 * resourceVersions, in the recorded order. The server makes no writes of its own (no system
 * namespaces, bootstrap RBAC or controllers: the kinds of the replayed CRDs follow them, kinds.ts) and answers every request but get, list and watch with
 * 403, so nothing else gets into the stream. The source is only read: a data folder through a
 * snapshot of its log (../sources/data-dir.ts), opened with the encryption at rest it was written with.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authorizer } from '../../api/authorization.js';
import { HandoverPort } from '../../http/handover-port.js';
import { createApiServer, type ApiServer } from '../../http/server.js';
import { StoredEntry } from '../../log/codec.js';
import type { LogEntry } from '../../log/log.js';
import { buildRegistry } from '../../registry/build.js';
import { silentLogger, type Logger } from '../../observability/logger.js';
import { Metrics } from '../../observability/metrics.js';
import { Store } from '../../store/store.js';
import { type History } from '../core/history.js';
import { TimeTravelError } from '../core/errors.js';
import { ReplayControl } from './control.js';
import { replayKinds } from './kinds.js';
import { ReplayLog } from './log.js';
import { connectionsDrained, openConnections, replayEntries, replayWriter, type ReplayReport } from './loop.js';
import type { Speed } from './pacing.js';
import { stateEntries } from '../core/state-entries.js';
import { WAIT_NOTE_MS, waitingNote } from './waiting.js';
import { expired } from '../../registry/errors.js';

export interface ReplayOptions {
  /** What is replayed; the replay closes it when it closes. */
  history: History;
  /** Pause before the first entry past this version. */
  pauseAt?: number;
  speed: Speed;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** First entry replayed; default the history's first readable one. */
  from?: number;
  /** Last entry replayed; default the history's last. */
  to?: number;
  /** Hold the replay until this many watches are open. */
  watchers?: number;
  logger?: Logger;
  bookmarkIntervalMs?: number;
  /** Where a replay held for its watchers says what it waits for, every waitNoteMs (default 5 s). */
  onWaiting?: (text: string) => void;
  waitNoteMs?: number;
}

export interface Replaying {
  url: string;
  /** The served state before the first replayed entry: list at it, then watch from it. */
  initialVersion: number;
  from: number;
  to: number;
  /**
   * Ends every open watch with a 410 Expired saying why: its history is being rewritten (a fork), so
   * a client lists again, as Kubernetes clients do on 410, instead of resuming from its last version.
   */
  expireWatches(message: string): void;
  /**
   * The replay's port, for the fork's server to take over: from now on new connections wait for it
   * (none is refused through the switch), and close() leaves the port open.
   */
  handOver(): HandoverPort;
  /** Settles when the last entry is durable; rejects if the replay failed or was closed early. */
  done: Promise<ReplayReport>;
  control: ReplayControl;
  close(): Promise<void>;
}

/** The replay server is read-only, like a user bound to the `view` role. */
const readOnly: Authorizer = {
  authorize: (a) =>
    a.verb === 'get' || a.verb === 'list' || a.verb === 'watch' ? { decision: 'allow' } : { decision: 'noOpinion', reason: 'the replay server serves a recorded log: only get, list and watch' },
};

/** The range to replay, checked against what the history holds. */
function rangeOf(h: History, from?: number, to?: number): { from: number; to: number } {
  if (h.head === 0 || h.head <= h.oldest) throw new TimeTravelError('the recording holds no log entries');
  const f = from ?? h.oldest + 1;
  const t = to ?? h.head;
  if (f <= h.oldest) throw new TimeTravelError(`--from ${f}: the recording's history starts at ${h.oldest + 1} (the state at ${h.oldest} is the oldest it holds)`);
  if (t > h.head) throw new TimeTravelError(`--to ${t}: the recording ends at ${h.head}`);
  if (f > t) throw new TimeTravelError(`--from ${f} is after --to ${t}`);
  return { from: f, to: t };
}

/** The state at rv as entries, in version order: each object's stored bytes at the version that wrote it. */
async function stateAsEntries(h: History, rv: number): Promise<LogEntry[]> {
  const out: LogEntry[] = [];
  for await (const page of stateEntries(h, rv)) {
    for (const e of page) out.push(new StoredEntry(e.seq, 'put', e.key, Buffer.from(e.raw.buffer, e.raw.byteOffset, e.raw.byteLength), 0, e.raw.byteLength, undefined));
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/**
 * The replay's port. Once handed over (to a fork's server), a kept-alive connection would carry the
 * client's next request to the replay, not the fork: the idle ones close at once (the replay is
 * paused, its clients quiet: their next requests open new connections, which wait for the fork), each
 * answer after closes its connection, and close() leaves the port open.
 */
async function replayPort(api: ApiServer, port: number): Promise<{ listening: HandoverPort; handOver(): HandoverPort; close(): Promise<void> }> {
  const listening = await HandoverPort.listen(port, '127.0.0.1');
  let handedOver = false;
  api.http.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => void (handedOver && res.setHeader('Connection', 'close')));
  return {
    listening,
    handOver: () => {
      handedOver = true;
      listening.hold();
      api.http.closeIdleConnections();
      return listening;
    },
    close: async () => {
      if (!handedOver) await listening.close();
    },
  };
}

export async function startReplay(opts: ReplayOptions): Promise<Replaying> {
  const opened: { close(): Promise<void> }[] = [opts.history];
  const cleanUp = async () => {
    for (const o of opened.reverse()) await o.close();
  };
  try {
    const { history } = opts;
    const { storedEntries, entry } = history;
    if (!storedEntries || !entry) throw new TimeTravelError('replay reads a data folder or a recording, not a server');
    const { from, to } = rangeOf(history, opts.from, opts.to);
    const log = new ReplayLog(await stateAsEntries(history, from - 1), from, { entries: storedEntries.bind(history), entry: entry.bind(history) });
    opened.push(log);
    await log.open();
    // Never restarted (its folder goes on close): a checkpoint every 100k entries was work for nothing.
    const store = new Store({ log, checkpointEvery: Number.MAX_SAFE_INTEGER });
    opened.push(store);
    await store.start();
    // The built-in kinds and those of the CRDs replayed so far, as a server's KindCatalog holds them.
    const { catalog, stop } = replayKinds(store);
    opened.push({ close: async () => stop() });
    const logger = opts.logger ?? silentLogger;
    const api = createApiServer({
      objects: buildRegistry(store, catalog.all, { logger, secret: randomBytes(32), authorizer: readOnly }),
      kinds: catalog.all,
      metrics: new Metrics(),
      logger,
      ...(opts.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: opts.bookmarkIntervalMs } : {}),
      authorizer: readOnly,
    });
    const connections = openConnections(api);
    const port = await replayPort(api, opts.port ?? 0);
    opened.push(port);
    opened.push(api);
    await api.start();
    port.listening.serve(api.http);
    let closed = false;
    const isClosed = () => closed;
    if (opts.pauseAt !== undefined && opts.pauseAt >= to) throw new TimeTravelError(`--pause-at ${opts.pauseAt}: the replay ends at ${to}: it would never pause`);
    if (opts.pauseAt !== undefined && opts.pauseAt < from - 1) throw new TimeTravelError(`--pause-at ${opts.pauseAt}: the replay starts after ${from - 1}`);
    const control = new ReplayControl(from - 1, to, opts.speed, opts.pauseAt);
    const done = replayEntries({
      pages: storedEntries.call(history, from, to),
      control,
      writer: replayWriter(log),
      drained: () => connectionsDrained(connections, isClosed),
      watching: () => api.context.watches.size,
      from,
      to,
      speed: opts.speed,
      watchers: opts.watchers ?? 0,
      isClosed,
      ...(opts.onWaiting ? { waiting: { note: waitingNote(history, from, to, opts.watchers ?? 0), say: opts.onWaiting, everyMs: opts.waitNoteMs ?? WAIT_NOTE_MS } } : {}),
    });
    // Not a failure until someone asks: close() may stop the replay on purpose.
    done.catch(() => undefined).finally(() => control.ended());
    let closing: Promise<void> | undefined;
    return {
      url: `http://127.0.0.1:${port.listening.port}`,
      initialVersion: from - 1,
      from,
      to,
      done,
      control,
      expireWatches: (message) => {
        for (const end of [...api.context.watches]) end(expired(message));
      },
      handOver: port.handOver,
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
