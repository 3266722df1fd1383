import type { ServerResponse } from 'node:http';
import type { Subscription } from 'rxjs';
import type { WebSocket } from 'ws';
import type { KindStrategy } from '../../resources/strategy.js';
import type { KubeObject } from '../../resources/types.js';
import { LogError } from '../../log/log.js';
import type { Store } from '../../store/store.js';
import { changesAfter } from '../../store/watch.js';
import { encodeStored, LazyObject, peekObject, type Change, type ChangeType, type StoredObject } from '../../store/view.js';
import { msgpackToJson } from '../../log/msgpack-json.js';
import { toStatus } from '../respond/respond.js';
import { gone, internalError, tooLargeResourceVersion, type Status } from '../respond/status.js';

export type WatchEventType = ChangeType | 'BOOKMARK' | 'ERROR';

/**
 * The annotation of the bookmark that ends the initial events of a streaming list. Kubernetes calls
 * it `k8s.io/initial-events-end` (client-go's watch-list reflector looks for that name). The spec
 * (api.md, sendInitialEvents) names it `orch.io/initial-events-end`, and orch.io replaces k8s.io in
 * the server's own annotation keys; none of the clients we must serve unchanged (clients.md: kubectl
 * up to 1.33, client-node 1.4, python-kubernetes 22) sends sendInitialEvents, so the spec's name wins.
 */
export const INITIAL_EVENTS_END = 'orch.io/initial-events-end';

/** Where a watch sends its events: an HTTP chunked stream or a WebSocket, one event per line/message. */
export interface WatchSink {
  /** Queues one event. Returns false once more than the sink's bound is queued (the watch is then dropped). */
  send(line: Buffer): boolean;
  /** True while the queue is above its high-water mark: producers that can wait (initial state, replay) should. */
  needsDrain(): boolean;
  /** Settles once the queue is below its high-water mark again, or the peer is gone. */
  drained(): Promise<void>;
  /** Ends the stream; a peer that does not take the rest within a grace period is cut off. */
  end(): void;
  onClose(fn: () => void): void;
}

export interface WatchSpec {
  kind: KindStrategy;
  apiVersion: string;
  keyPrefix: string;
  /** Changes after this version; undefined = start with the current state as ADDED events. */
  after?: number;
  /** With the current state: wait (up to freshWaitMs) until the view has applied this version first. */
  freshAs?: number;
  freshWaitMs?: number;
  /** Send the initial-events-end bookmark after the initial state (sendInitialEvents=true). */
  initialEventsEnd: boolean;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  timeoutMs: number;
  matches?: (obj: KubeObject) => boolean;
  /** Renders an object for this watcher (Table rows for kubectl); undefined = the shared JSON. */
  render?: (obj: KubeObject) => unknown;
  /** The current objects under keyPrefix, for the initial state. */
  current: () => Iterable<StoredObject>;
}

/** setTimeout takes at most 2^31-1 ms; a longer timeoutSeconds would otherwise fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One watch: initial state (when asked), then changes from the log, filtered by selector with
 * Kubernetes' transitions (an object that stops matching is DELETED, one that starts is ADDED),
 * bookmarks, and a timeout. Every line for the shared JSON form is encoded once per change.
 *
 * The initial state and a replay from the log are written at the pace the peer reads (they wait
 * whenever the sink is above its high-water mark), so a streaming list of any size holds one
 * reference per object and a sink's worth of bytes, never the whole state encoded. Live changes are
 * never held back for one watcher: past the sink's bound it is dropped with an ERROR.
 */
export function runWatch(store: Store, spec: WatchSpec, sink: WatchSink): () => void {
  let progress = spec.after ?? store.appliedSeq;
  let sub: Subscription | undefined;
  let done = false;
  /** Periodic bookmarks start once the initial state is out (its end has a bookmark of its own). */
  let started = false;
  const timers: NodeJS.Timeout[] = [];

  const stop = () => {
    done = true;
    sub?.unsubscribe();
    for (const t of timers) clearTimeout(t);
  };
  const finish = () => {
    if (done) return;
    stop();
    sink.end();
  };
  sink.onClose(stop);

  const emit = (line: Buffer) => {
    if (done) return;
    if (sink.send(line)) return;
    // Past the buffer bound the watcher is dropped so it cannot hold memory or the log back; the
    // ERROR tells it why, and it resumes from the last resourceVersion it received.
    sink.send(eventLine('ERROR', JSON.stringify(tooSlow)));
    finish();
  };
  const emitObject = (type: WatchEventType, s: StoredObject, change?: Change) => {
    if (spec.render) return emit(eventLine(type, JSON.stringify(spec.render(s.obj))));
    if (change && type !== 'BOOKMARK' && type !== 'ERROR') {
      const lines = (change.lines ??= new Map());
      const key = `${type} ${spec.apiVersion}`;
      let line = lines.get(key);
      if (!line) lines.set(key, (line = eventLine(type, objectJson(s, spec.apiVersion))));
      return emit(line);
    }
    emit(eventLine(type, objectJson(s, spec.apiVersion)));
  };
  /**
   * One object of the initial state, encoded for this watcher and kept by nothing: a lazy object not
   * yet read is decoded for this line only, and its JSON is not cached. Caching every object's tree
   * and JSON made a streaming list of the whole store leave as much behind as a plain list (see
   * test/watch/streaming-memory.test.ts); JSON that a get, list or live event already cached is reused.
   */
  const emitInitial = (s: StoredObject) => {
    // Without a selector or a rendering, an object still held as bytes is encoded from them: a tree
    // built per object only to be dropped was most of a streaming list's garbage.
    const fromBytes = !spec.matches && !spec.render ? bytesJson(s, spec.apiVersion) : undefined;
    if (fromBytes) return emit(eventLine('ADDED', fromBytes));
    const obj = peekObject(s);
    if (spec.matches && !spec.matches(obj)) return;
    emit(eventLine('ADDED', spec.render ? JSON.stringify(spec.render(obj)) : uncachedJson(s, obj, spec.apiVersion)));
  };
  /** A bookmark carries only kind, apiVersion and the version reached (plus the end marker). */
  const bookmark = (annotations?: Record<string, string>) => {
    const obj = {
      kind: spec.kind.kind,
      apiVersion: spec.apiVersion,
      metadata: { resourceVersion: String(progress), ...(annotations ? { annotations } : {}) },
    };
    emit(eventLine('BOOKMARK', JSON.stringify(obj)));
  };
  const fail = (status: Status) => {
    emit(eventLine('ERROR', JSON.stringify(status)));
    finish();
  };

  const onChange = (c: Change) => {
    const m = spec.matches;
    if (!m) return emitObject(c.type, c.cur, c);
    const now = c.type !== 'DELETED' && m(c.cur.obj);
    const before = c.prev !== undefined && m(c.prev.obj);
    if (c.type === 'DELETED') {
      if (before || (c.prev === undefined && m(c.cur.obj))) emitObject('DELETED', c.cur, c);
    } else if (now && before) emitObject('MODIFIED', c.cur, c);
    else if (now) emitObject('ADDED', c.cur, c);
    else if (before) emitObject('DELETED', c.cur, c);
  };

  const follow = (after: number) => {
    started = true;
    sub = changesAfter(store, {
      after,
      keyPrefix: spec.keyPrefix,
      onProgress: (seq) => (progress = seq),
      pace: () => (sink.needsDrain() ? sink.drained() : undefined),
    }).subscribe({
      next: onChange,
      error: (err: unknown) => {
        if (err instanceof LogError && err.code === 'COMPACTED') fail(gone(`too old resource version: ${after} (${store.log.firstSeq - 1})`).status);
        else fail(toStatus(err));
      },
      complete: finish,
    });
  };

  /** The current state as ADDED events, one pointer per object held, written as the peer reads. */
  const initialState = async () => {
    if (spec.freshAs !== undefined && store.appliedSeq < spec.freshAs) {
      const fresh = await store.waitFor(spec.freshAs, spec.freshWaitMs ?? 3000);
      if (done) return;
      if (!fresh) return fail(tooLargeResourceVersion(spec.freshAs, store.appliedSeq).status);
    }
    const at = store.appliedSeq;
    progress = at;
    // Stored versions are immutable, so references taken now are a consistent snapshot at `at`;
    // each is released once written, so versions replaced meanwhile can be collected.
    const snapshot: (StoredObject | undefined)[] = Array.from(spec.current());
    for (let i = 0; i < snapshot.length; i++) {
      const s = snapshot[i]!;
      snapshot[i] = undefined;
      emitInitial(s);
      if (done) return;
      if (sink.needsDrain()) {
        await sink.drained();
        if (done) return;
      }
    }
    // The end marker is a bookmark, so only a client that takes bookmarks gets it (a defaulted
    // sendInitialEvents on a plain rv="" watch must look like the legacy initial ADDED events).
    if (spec.initialEventsEnd && spec.bookmarks) bookmark({ [INITIAL_EVENTS_END]: 'true' });
    if (done) return;
    // What changed while the state was written is read back from the log, not queued in memory.
    follow(at);
  };

  if (spec.after === undefined) {
    initialState().catch((err: unknown) => fail(toStatus(err)));
  } else {
    follow(spec.after);
  }
  if (done) return finish;

  if (spec.bookmarks) {
    const tick = () => {
      if (started) bookmark();
      timers[0] = setTimeout(tick, spec.bookmarkIntervalMs);
    };
    timers[0] = setTimeout(tick, spec.bookmarkIntervalMs);
  }
  timers.push(setTimeout(finish, Math.min(spec.timeoutMs, MAX_TIMER_MS)));
  return finish;
}

const tooSlow = internalError('watch closed: the client did not keep up with the event stream; resume from the last resourceVersion received').status;

const LINE_END = Buffer.from('}\n');
const eventLine = (type: WatchEventType, objectJson: string | Buffer): Buffer =>
  typeof objectJson === 'string'
    ? Buffer.from(`{"type":"${type}","object":${objectJson}}\n`)
    : Buffer.concat([Buffer.from(`{"type":"${type}","object":`), objectJson, LINE_END]);

/** The stored JSON when the requested version is the stored one (the common case); else re-stamped. */
function objectJson(s: StoredObject, apiVersion: string): string | Buffer {
  return s.obj.apiVersion === apiVersion ? encodeStored(s) : restamped(s.obj, apiVersion);
}

/** As objectJson for obj (s's object, already at hand), without caching anything on s. */
function uncachedJson(s: StoredObject, obj: KubeObject, apiVersion: string): string | Buffer {
  return obj.apiVersion === apiVersion ? (s.json ?? JSON.stringify(obj)) : restamped(obj, apiVersion);
}

const restamped = (obj: KubeObject, apiVersion: string): string => JSON.stringify({ ...obj, apiVersion });

/** The JSON of an object not decoded nor encoded yet, from its bytes, when it is stored at apiVersion; nothing is kept on it. */
function bytesJson(s: StoredObject, apiVersion: string): Buffer | undefined {
  if (!(s instanceof LazyObject) || s.isDecoded || s.json) return undefined;
  const t = msgpackToJson(s.raw);
  return t && t.apiVersion === apiVersion ? t.json : undefined;
}

export interface SinkLimits {
  /** Bytes a watcher may have queued before it is dropped. */
  maxBuffered: number;
  /** Queue size above which the initial state and replays wait for the peer. */
  highWater: number;
  /** How long an ended stream may take to flush before its connection is cut. */
  graceMs: number;
}

export const DEFAULT_SINK_LIMITS: SinkLimits = { maxBuffered: 16 * 1024 * 1024, highWater: 64 * 1024, graceMs: 5000 };

/** An HTTP response as a watch sink: chunked, one write (so one chunk, flushed) per event. */
export function httpSink(res: ServerResponse, limits: SinkLimits = DEFAULT_SINK_LIMITS): WatchSink {
  const waiters = new Set<() => void>();
  const wake = () => {
    if (res.writableLength > limits.highWater && !res.destroyed) return;
    for (const w of waiters) w();
    waiters.clear();
  };
  res.on('drain', wake);
  res.on('close', () => {
    for (const w of waiters) w();
    waiters.clear();
  });
  return {
    send(line) {
      res.write(line);
      return res.writableLength <= limits.maxBuffered;
    },
    needsDrain: () => !res.destroyed && res.writableLength > limits.highWater,
    drained() {
      if (res.destroyed || res.writableLength <= limits.highWater) return Promise.resolve();
      return new Promise((resolve) => waiters.add(resolve));
    },
    end() {
      if (res.writableEnded) return;
      res.end();
      if (res.writableFinished) return;
      // A peer that stopped reading would keep what is queued alive as long as the connection lives.
      const cut = setTimeout(() => res.destroy(), limits.graceMs);
      cut.unref();
      res.once('close', () => clearTimeout(cut));
    },
    onClose(fn) {
      res.on('close', fn);
    },
  };
}

/** A WebSocket as a watch sink: one text message per event, as Kubernetes frames JSON watches. */
export function webSocketSink(ws: WebSocket, limits: SinkLimits = DEFAULT_SINK_LIMITS): WatchSink {
  const waiters = new Set<() => void>();
  const wake = () => {
    if (ws.bufferedAmount > limits.highWater && ws.readyState === ws.OPEN) return;
    for (const w of waiters) w();
    waiters.clear();
  };
  ws.on('close', wake);
  return {
    send(line) {
      if (ws.readyState !== ws.OPEN) return true;
      ws.send(line, { binary: false }, wake);
      return ws.bufferedAmount <= limits.maxBuffered;
    },
    needsDrain: () => ws.readyState === ws.OPEN && ws.bufferedAmount > limits.highWater,
    drained() {
      if (ws.readyState !== ws.OPEN || ws.bufferedAmount <= limits.highWater) return Promise.resolve();
      return new Promise((resolve) => waiters.add(resolve));
    },
    end() {
      if (ws.readyState === ws.CLOSED) return;
      ws.close(1000);
      const cut = setTimeout(() => ws.terminate(), limits.graceMs);
      cut.unref();
      ws.once('close', () => clearTimeout(cut));
    },
    onClose(fn) {
      ws.on('close', fn);
    },
  };
}
