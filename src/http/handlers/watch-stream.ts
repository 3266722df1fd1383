import type { WatchEventTally } from '../../observability/watch-events.js';
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Subscription } from 'rxjs';
import type { WebSocket } from 'ws';
import type { KindStrategy } from '../../api/strategy.js';
import type { KubeObject } from '../../api/types.js';
import { changeJson, peekObject, transientJson, type Change, type ChangeType } from '../../registry/stored.js';
import type { OpenWatch, WatchEvent, WatchFlow } from '../../registry/watch.js';
import { toStatus } from '../respond/errors.js';
import { framedBatch, type ChangeEvent } from './watch-batch.js';
import { frameHeader } from './websocket-frame.js';

export type WatchEventType = ChangeType | 'BOOKMARK' | 'ERROR';

/**
 * The annotation of the bookmark that ends the initial events of a streaming list. Kubernetes calls
 * it `k8s.io/initial-events-end` (client-go's watch-list reflector looks for that name). The spec
 * (api.md, sendInitialEvents) names it `orch.io/initial-events-end`, and orch.io replaces k8s.io in
 * the server's own annotation keys; none of the clients we must serve unchanged (clients.md: kubectl
 * up to 1.33, client-node 1.4, python-kubernetes 22) sends sendInitialEvents, so the spec's name wins.
 */
export const INITIAL_EVENTS_END = 'orch.io/initial-events-end';

/**
 * Where a watch writes its events: an HTTP chunked stream (a JSON line per event) or a WebSocket (a
 * text frame per event). A batch of events is one socket write.
 */
export interface WatchSink {
  /** How the sink frames an event line; the key of the frames a change shares between watchers. */
  readonly framing: 'line' | 'websocket';
  /** Writes the frames of one batch as one socket write. */
  write(frames: Buffer[]): void;
  /**
   * Writes a batch of change events framed once for every watcher given the same (watch-batch.ts),
   * where the sink can; the size of each event's line.
   */
  writeChanges?(events: ChangeEvent[], apiVersion: string): readonly number[];
  /** Bytes written and not yet taken by the peer. */
  buffered(): number;
  /** Settles once buffered() is at most `below`, or the peer is gone. */
  drained(below: number): Promise<void>;
  /** Ends the stream; a peer that does not take the rest within a grace period is cut off. */
  end(): void;
  onClose(fn: () => void): void;
}

/** How one watcher encodes its events. */
export interface WatchSpec {
  kind: KindStrategy;
  apiVersion: string;
  /** Renders an object for this watcher (Table rows for kubectl); undefined = the shared JSON. */
  render?: (obj: KubeObject) => unknown;
}

export interface SinkLimits {
  /** Unsent bytes past which a watcher stops taking live changes and catches up from the log (--watch-buffer). */
  maxBuffered: number;
  /** Unsent bytes above which the initial state and catch-up wait for the peer. */
  highWater: number;
  /** How long an ended stream may take to flush before its connection is cut. */
  graceMs: number;
  /** How long a watcher that is behind may go without draining before it is ended (--watch-stall-timeout). */
  stallTimeoutMs: number;
}

export const DEFAULT_SINK_LIMITS: SinkLimits = { maxBuffered: 4 * 1024 * 1024, highWater: 64 * 1024, graceMs: 5000, stallTimeoutMs: 60_000 };

/**
 * Runs one watch the registry prepared: its engine decides what the watcher gets (src/store/watch.ts);
 * this only encodes each batch, from bytes shared by every watcher where it can, and writes it.
 * Returns stop.
 */
export function runWatch(open: OpenWatch, spec: WatchSpec, sink: WatchSink, limits: SinkLimits = DEFAULT_SINK_LIMITS, tally?: WatchEventTally): (why?: unknown) => void {
  const flow: WatchFlow = {
    needsDrain: () => sink.buffered() > limits.highWater,
    drained: () => sink.drained(limits.highWater),
    behind: () => sink.buffered() > limits.maxBuffered,
  };
  const encode = encoderFor(spec, sink.framing);
  let ended = false;
  let sub: Subscription | undefined;
  const finish = () => {
    if (ended) return;
    ended = true;
    sub?.unsubscribe();
    sink.end();
  };
  const framesKey = `${spec.apiVersion} ${sink.framing}`;
  sub = open(flow, limits.stallTimeoutMs).subscribe({
    next: (events) => {
      if (!spec.render && sink.writeChanges && events.every(isChange)) {
        const sizes = sink.writeChanges(events, spec.apiVersion);
        if (tally) for (let i = 0; i < sizes.length; i++) tally.sent(sizes[i]);
        return;
      }
      // Watchers handed the same events (watch.ts eventsOf) share their frames when they encode alike.
      if (!spec.render && events === lastShared.events && framesKey === lastShared.key) {
        if (tally) for (const n of lastShared.sizes) tally.sent(n);
        return sink.write(lastShared.frames);
      }
      const frames: Buffer[] = [];
      const sizes: number[] = [];
      for (const e of events) {
        const from = frames.length;
        encode(e, frames);
        sizes.push(bytesFrom(frames, from));
      }
      if (tally) for (const n of sizes) tally.sent(n);
      if (!spec.render && 'change' in events[0]!) lastShared = { events, key: framesKey, frames, sizes };
      sink.write(frames);
    },
    // Whatever ends a watch from the server's side says why first, so clients log it and resume.
    error: (err: unknown) => {
      const frames: Buffer[] = [];
      encode.line('ERROR', JSON.stringify(toStatus(err)), frames);
      sink.write(frames);
      finish();
    },
    complete: finish,
  });
  // The engine may end the watch while it is subscribed to (a store already closed).
  if (ended) sub.unsubscribe();
  sink.onClose(() => {
    ended = true;
    sub?.unsubscribe();
  });
  return (why?: unknown) => {
    if (why !== undefined && !ended) {
      const frames: Buffer[] = [];
      encode.line('ERROR', JSON.stringify(toStatus(why)), frames);
      sink.write(frames);
    }
    finish();
  };
}

const isChange = (e: WatchEvent): e is ChangeEvent => 'change' in e;

/**
 * The frames last made for a batch of events, by apiVersion and framing, with each event's size (for
 * the watch event metrics): a batch reaches its watchers one after another, so those that get the
 * same events array take these frames (and the sink then its bytes, joined once: madeOnce) instead
 * of each building its own list.
 */
let lastShared: { events: WatchEvent[]; key: string; frames: Buffer[]; sizes: number[] } = { events: [], key: '', frames: [], sizes: [] };

const bytesFrom = (frames: Buffer[], from: number): number => {
  let n = 0;
  for (let i = from; i < frames.length; i++) n += frames[i].length;
  return n;
};

interface Encoder {
  (e: WatchEvent, into: Buffer[]): void;
  line(type: WatchEventType, json: string | Buffer, into: Buffer[]): void;
}

/**
 * Encodes events for one watcher into frames. A change's frames are made once per (type, apiVersion,
 * framing) and shared by every watcher that receives them; a WebSocket frame shares the JSON line's
 * bytes and adds only its header.
 */
function encoderFor(spec: WatchSpec, framing: WatchSink['framing']): Encoder {
  const line = (type: WatchEventType, json: string | Buffer, into: Buffer[]) => {
    const l = eventLine(type, json);
    if (framing === 'websocket') into.push(frameHeader(l.length));
    into.push(l);
  };
  const rendered = (o: KubeObject) => JSON.stringify(spec.render!(o));
  const encode = (e: WatchEvent, into: Buffer[]) => {
    if (e.type === 'BOOKMARK') {
      const metadata = { resourceVersion: String(e.seq), ...(e.initialEventsEnd ? { annotations: { [INITIAL_EVENTS_END]: 'true' } } : {}) };
      return line('BOOKMARK', JSON.stringify({ kind: spec.kind.kind, apiVersion: spec.apiVersion, metadata }), into);
    }
    if ('initial' in e) return line('ADDED', spec.render ? rendered(peekObject(e.initial)) : transientJson(e.initial, spec.apiVersion), into);
    if (spec.render) return line(e.type, rendered(e.change.cur.obj), into);
    sharedFrames(e.change, e.type, spec.apiVersion, framing, into);
  };
  return Object.assign(encode, { line });
}

/** The frames of a change for (type, apiVersion, framing), made by the first watcher that needs them. */
function sharedFrames(c: Change, type: ChangeType, apiVersion: string, framing: WatchSink['framing'], into: Buffer[]): void {
  const lines = (c.lines ??= new Map());
  const key = `${type} ${apiVersion}`;
  let l = lines.get(key);
  if (!l) lines.set(key, (l = eventLine(type, changeJson(c, apiVersion))));
  if (framing === 'websocket') {
    const hk = `${key} ws`;
    let h = lines.get(hk);
    if (!h) lines.set(hk, (h = frameHeader(l.length)));
    into.push(h);
  }
  into.push(l);
}

const LINE_END = Buffer.from('}\n');
const eventLine = (type: WatchEventType, json: string | Buffer): Buffer =>
  typeof json === 'string' ? Buffer.from(`{"type":"${type}","object":${json}}\n`) : Buffer.concat([Buffer.from(`{"type":"${type}","object":`), json, LINE_END]);

/**
 * A batch's frames as one buffer, so it is one socket write (and one HTTP chunk). Joined rather
 * than corked: a corked socket writes its many small buffers with one writev, and a streaming list
 * written that way grew the server by 100 MiB instead of 12–20 (test/watch/streaming-memory.test.ts).
 */
const joined = (frames: Buffer[]): Buffer => (frames.length === 1 ? frames[0]! : Buffer.concat(frames));

const CRLF = Buffer.from('\r\n');

/** A batch as one HTTP/1.1 chunk: its size in hex, the bytes, CRLF. */
const chunk = (frames: Buffer[]): Buffer => {
  const body = joined(frames);
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, CRLF]);
};

/**
 * make(frames), made once for the watchers given the same frames one after another. The fan-out
 * hands a commit batch to its watchers in one go, and watchers that receive the same events receive
 * the same shared frames (sharedFrames), so a pointer comparison with the previous watcher's frames
 * finds the bytes already made: a broadcast joins and frames a batch once, not once per watcher.
 */
function madeOnce(make: (frames: Buffer[]) => Buffer): (frames: Buffer[]) => Buffer {
  let last: Buffer[] = [];
  let out: Buffer = Buffer.alloc(0);
  return (frames) => {
    if (frames !== last && (frames.length !== last.length || frames.some((f, i) => f !== last[i]))) {
      last = frames;
      out = make(frames);
    }
    return out;
  };
}

const joinedOnce = madeOnce(joined);
const chunkOnce = madeOnce(chunk);

/** Settles the waiters once check() holds; the connection's drain and close events call wake. */
function drainWaiters(buffered: () => number, gone: () => boolean) {
  const waiters = new Map<() => void, number>();
  return {
    wait(below: number): Promise<void> {
      if (gone() || buffered() <= below) return Promise.resolve();
      return new Promise((resolve) => waiters.set(resolve, below));
    },
    wake(): void {
      for (const [w, below] of waiters) {
        if (!gone() && buffered() > below) continue;
        waiters.delete(w);
        w();
      }
    },
  };
}

/**
 * An HTTP response as a watch sink: chunked, a batch one chunk. Once the headers are on the socket,
 * the chunks (framed once per batch, shared by the watchers that get the same events) go straight
 * to the socket: through ServerResponse.write each watcher's batch cost a chunk header made from a
 * string, a four-part writev and a deferred uncork, which were most of a broadcast's CPU. The
 * response still writes the last chunk when it ends.
 */
export function httpSink(res: ServerResponse, graceMs = DEFAULT_SINK_LIMITS.graceMs): WatchSink {
  const socket = res.socket;
  // Only when nothing of the response waits in it (it is the socket's current response) and it is
  // chunked (not an HTTP/1.0 peer).
  const direct = socket !== null && res.headersSent && res.writableLength === socket.writableLength && (res as { chunkedEncoding?: boolean }).chunkedEncoding === true;
  const buffered = () => (direct ? socket.writableLength : res.writableLength);
  const drains = drainWaiters(buffered, () => res.destroyed);
  (direct ? socket : res).on('drain', drains.wake);
  res.on('close', drains.wake);
  return {
    framing: 'line',
    write(frames) {
      if (res.destroyed || res.writableEnded || frames.length === 0) return;
      if (direct) socket.write(chunkOnce(frames));
      else res.write(joinedOnce(frames));
    },
    writeChanges(events, apiVersion) {
      if (res.destroyed || res.writableEnded || events.length === 0) return [];
      const batch = framedBatch(events, apiVersion, direct);
      if (direct) socket.write(batch.bytes);
      else res.write(batch.bytes);
      return batch.sizes;
    },
    buffered,
    drained: (below) => drains.wait(below),
    end() {
      if (res.writableEnded) return;
      res.end();
      if (res.writableFinished) return;
      // A peer that stopped reading would keep what is queued alive as long as the connection lives.
      const cut = setTimeout(() => res.destroy(), graceMs);
      cut.unref();
      res.once('close', () => clearTimeout(cut));
    },
    onClose(fn) {
      res.on('close', fn);
    },
  };
}

/**
 * A WebSocket as a watch sink: a text frame per event, as Kubernetes frames JSON watches. The frames
 * are written straight to the upgraded socket (no permessage-deflate is offered, so they are plain),
 * which lets every watcher share a change's frame; ws still answers pings and closes the connection.
 */
export function webSocketSink(ws: WebSocket, socket: Duplex, graceMs = DEFAULT_SINK_LIMITS.graceMs): WatchSink {
  const drains = drainWaiters(
    () => socket.writableLength,
    () => ws.readyState !== ws.OPEN,
  );
  socket.on('drain', drains.wake);
  ws.on('close', drains.wake);
  return {
    framing: 'websocket',
    write(frames) {
      if (ws.readyState !== ws.OPEN || frames.length === 0) return;
      socket.write(joinedOnce(frames));
    },
    buffered: () => socket.writableLength,
    drained: (below) => drains.wait(below),
    end() {
      if (ws.readyState === ws.CLOSED) return;
      ws.close(1000);
      const cut = setTimeout(() => ws.terminate(), graceMs);
      cut.unref();
      ws.once('close', () => clearTimeout(cut));
    },
    onClose(fn) {
      ws.on('close', fn);
    },
  };
}
