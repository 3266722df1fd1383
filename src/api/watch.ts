import type { ServerResponse } from 'node:http';
import type { Subscription } from 'rxjs';
import type { KindStrategy } from '../resources/strategy.js';
import type { KubeObject } from '../resources/types.js';
import { LogError } from '../log/log.js';
import { StoreError } from '../store/errors.js';
import type { Store } from '../store/store.js';
import { changesAfter } from '../store/watch.js';
import { encodeStored, type Change, type ChangeType, type StoredObject } from '../store/view.js';
import { toStatus } from './respond.js';
import { gone, internalError, type Status } from './status.js';

export type WatchEventType = ChangeType | 'BOOKMARK' | 'ERROR';

/** Where a watch sends its events: an HTTP chunked stream or a WebSocket, one event per line/message. */
export interface WatchSink {
  /** Returns false once the peer is too far behind (the watch then ends). */
  send(line: Buffer): boolean;
  end(): void;
  onClose(fn: () => void): void;
}

export interface WatchSpec {
  kind: KindStrategy;
  apiVersion: string;
  keyPrefix: string;
  /** Changes after this version; undefined = start with the current state as ADDED events. */
  after?: number;
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

/**
 * One watch: initial state (when asked), then changes from the log, filtered by selector with
 * Kubernetes' transitions (an object that stops matching is DELETED, one that starts is ADDED),
 * bookmarks, and a timeout. Every line for the shared JSON form is encoded once per change.
 */
export function runWatch(store: Store, spec: WatchSpec, sink: WatchSink): () => void {
  let progress = spec.after ?? store.appliedSeq;
  let sub: Subscription | undefined;
  let done = false;
  const timers: NodeJS.Timeout[] = [];

  const finish = () => {
    if (done) return;
    done = true;
    sub?.unsubscribe();
    for (const t of timers) clearTimeout(t);
    sink.end();
  };
  sink.onClose(() => {
    done = true;
    sub?.unsubscribe();
    for (const t of timers) clearTimeout(t);
  });

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
      const lines = (change.lines ??= {});
      return emit((lines[type] ??= eventLine(type, objectJson(s, spec.apiVersion))));
    }
    emit(eventLine(type, objectJson(s, spec.apiVersion)));
  };
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

  let after = spec.after;
  if (after === undefined) {
    after = store.appliedSeq;
    progress = after;
    for (const s of spec.current()) if (!spec.matches || spec.matches(s.obj)) emitObject('ADDED', s);
    // The end marker is a bookmark, so only a client that takes bookmarks gets it (a defaulted
    // sendInitialEvents on a plain rv="" watch must look like the legacy initial ADDED events).
    if (spec.initialEventsEnd && spec.bookmarks) bookmark({ 'orch.io/initial-events-end': 'true' });
  }
  if (done) return finish;

  sub = changesAfter(store, {
    after,
    keyPrefix: spec.keyPrefix,
    onProgress: (seq) => (progress = seq),
  }).subscribe({
    next: onChange,
    error: (err: unknown) => {
      if (err instanceof LogError && err.code === 'COMPACTED') fail(gone(`too old resource version: ${after} (${store.log.firstSeq - 1})`).status);
      else if (err instanceof StoreError && err.code === 'FUTURE_SEQ') fail(toStatus(err));
      else fail(toStatus(err));
    },
    complete: finish,
  });

  if (spec.bookmarks) {
    const tick = () => {
      bookmark();
      timers[0] = setTimeout(tick, spec.bookmarkIntervalMs);
    };
    timers[0] = setTimeout(tick, spec.bookmarkIntervalMs);
  }
  timers.push(setTimeout(finish, spec.timeoutMs));
  return finish;
}

const tooSlow = internalError('watch closed: the client did not keep up with the event stream; resume from the last resourceVersion received').status;

const eventLine = (type: WatchEventType, objectJson: string): Buffer => Buffer.from(`{"type":"${type}","object":${objectJson}}\n`);

/** The stored JSON when the requested version is the stored one (the common case); else re-stamped. */
function objectJson(s: StoredObject, apiVersion: string): string {
  return s.obj.apiVersion === apiVersion ? encodeStored(s) : JSON.stringify({ ...s.obj, apiVersion });
}

/** An HTTP response as a watch sink: chunked, flushed per event, bounded by the bytes it buffers. */
export function httpSink(res: ServerResponse, maxBuffered = 16 * 1024 * 1024): WatchSink {
  return {
    send(line) {
      res.write(line);
      return res.writableLength <= maxBuffered;
    },
    end() {
      if (!res.writableEnded) res.end();
    },
    onClose(fn) {
      res.on('close', fn);
    },
  };
}
