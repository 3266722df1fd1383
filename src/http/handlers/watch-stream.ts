/** The watches of one server, run: each batch of events encoded once for the watchers it is shared by and written to their sinks. */
import type { WatchEventTally } from '../../observability/watch-events.js';
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Subscription } from 'rxjs';
import type { WebSocket } from 'ws';
import type { KindStrategy } from '../../api/strategy.js';
import type { KubeObject } from '../../api/types.js';
import type { Change, ChangeType, ObjectReads } from '../../registry/reads.js';
import type { OpenWatch, WatchEvent, WatchFlow } from '../../registry/watch.js';
import { toStatus } from '../respond/errors.js';
import { chunk, eventLine, framedBatch, joined, pushChange, pushLine, type ChangeEvent, type FramedBatch, type Framing, type WatchEventType } from './watch-frames.js';
import { httpSink, webSocketSink, type SharedFrames, type WatchSink } from './watch-sinks.js';

/**
 * The annotation of the bookmark that ends the initial events of a streaming list. Kubernetes calls
 * it `k8s.io/initial-events-end` (client-go's watch-list reflector looks for that name). The spec
 * (api.md, sendInitialEvents) names it `orch.io/initial-events-end`, and orch.io replaces k8s.io in
 * the server's own annotation keys; none of the clients we must serve unchanged (clients.md: kubectl
 * up to 1.33, client-node 1.4, python-kubernetes 22) sends sendInitialEvents, so the spec's name wins.
 */
export const INITIAL_EVENTS_END = 'orch.io/initial-events-end';

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
 * The watch streams of one server: each runs a watch the registry prepared, and holds what the
 * watchers handed the same batch one after another share. The fan-out hands a commit batch to its
 * watchers in one go, and watchers that receive the same events receive the same events array
 * (store/watch.ts eventsOf) and the same shared frames (pushChange), so a comparison by identity with
 * the previous watcher's batch finds its bytes made already: a broadcast frames and joins a batch
 * once, not once per watcher.
 */
export class WatchStreams implements SharedFrames {
  /** The frames last made for an events array, by apiVersion and framing, with each event's size (for the watch event metrics). */
  private lastEvents: { events: WatchEvent[]; key: string; frames: Buffer[]; sizes: number[] } = { events: [], key: '', frames: [], sizes: [] };
  /** The last batch framed into one buffer: a watcher given the same changes (by identity), in the same framing, gets its bytes. */
  private lastBatch: { changes: Change[]; types: ChangeType[]; apiVersion: string; chunked: boolean; batch: FramedBatch } | undefined;
  private readonly joinedOnce = madeOnce(joined);
  private readonly chunkOnce = madeOnce(chunk);

  /** reads: the server's registry, which encodes the objects of a watch's initial events. */
  constructor(private readonly reads: InitialReads) {}

  /** A chunked HTTP response as a watch sink (see watch-sinks.ts). */
  httpSink(res: ServerResponse, graceMs = DEFAULT_SINK_LIMITS.graceMs): WatchSink {
    return httpSink(res, this, graceMs);
  }

  /** A WebSocket as a watch sink (see watch-sinks.ts). */
  webSocketSink(ws: WebSocket, socket: Duplex, graceMs = DEFAULT_SINK_LIMITS.graceMs): WatchSink {
    return webSocketSink(ws, socket, this, graceMs);
  }

  joined(frames: Buffer[]): Buffer {
    return this.joinedOnce(frames);
  }

  chunk(frames: Buffer[]): Buffer {
    return this.chunkOnce(frames);
  }

  batch(events: readonly ChangeEvent[], apiVersion: string, chunked: boolean): FramedBatch {
    const b = this.lastBatch;
    if (b && sameBatch(b, events, apiVersion, chunked)) return b.batch;
    const batch = framedBatch(events, apiVersion, chunked);
    this.lastBatch = { changes: events.map((e) => e.change), types: events.map((e) => e.type), apiVersion, chunked, batch };
    return batch;
  }

  /**
   * Runs one watch the registry prepared: its engine decides what the watcher gets (src/store/watch.ts);
   * this only encodes each batch, from bytes shared by every watcher where it can, and writes it.
   * Returns stop.
   */
  run(open: OpenWatch, spec: WatchSpec, sink: WatchSink, limits: SinkLimits = DEFAULT_SINK_LIMITS, tally?: WatchEventTally): (why?: unknown) => void {
    const flow: WatchFlow = {
      needsDrain: () => sink.buffered() > limits.highWater,
      drained: () => sink.drained(limits.highWater),
      behind: () => sink.buffered() > limits.maxBuffered,
    };
    const encode = encoderFor(this.reads, spec, sink.framing);
    let ended = false;
    let sub: Subscription | undefined;
    const finish = () => {
      if (ended) return;
      ended = true;
      sub?.unsubscribe();
      sink.end();
    };
    const sayWhy = (why: unknown) => sink.write(pushed(eventLine('ERROR', JSON.stringify(toStatus(why))), sink.framing));
    sub = open(flow, limits.stallTimeoutMs).subscribe({
      next: (events) => this.write(events, spec, sink, encode, tally),
      // Whatever ends a watch from the server's side says why first, so clients log it and resume.
      error: (err: unknown) => {
        sayWhy(err);
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
      if (why !== undefined && !ended) sayWhy(why);
      finish();
    };
  }

  /** One batch of a watch's events onto its sink, counted in tally. */
  private write(events: WatchEvent[], spec: WatchSpec, sink: WatchSink, encode: Encoder, tally: WatchEventTally | undefined): void {
    if (!spec.render && sink.writeChanges && events.every(isChange)) {
      const sizes = sink.writeChanges(events, spec.apiVersion);
      if (tally) for (let i = 0; i < sizes.length; i++) tally.sent(sizes[i]);
      return;
    }
    const key = `${spec.apiVersion} ${sink.framing}`;
    const last = this.lastEvents;
    // Watchers handed the same events (watch.ts eventsOf) share their frames when they encode alike.
    if (!spec.render && events === last.events && key === last.key) {
      if (tally) for (const n of last.sizes) tally.sent(n);
      return sink.write(last.frames);
    }
    const frames: Buffer[] = [];
    const sizes: number[] = [];
    for (const e of events) {
      const from = frames.length;
      encode(e, frames);
      sizes.push(bytesFrom(frames, from));
    }
    if (tally) for (const n of sizes) tally.sent(n);
    if (!spec.render && 'change' in events[0]!) this.lastEvents = { events, key, frames, sizes };
    sink.write(frames);
  }
}

function sameBatch(b: { changes: Change[]; types: ChangeType[]; apiVersion: string; chunked: boolean }, events: readonly ChangeEvent[], apiVersion: string, chunked: boolean): boolean {
  if (b.changes.length !== events.length || b.apiVersion !== apiVersion || b.chunked !== chunked) return false;
  for (let i = 0; i < events.length; i++) if (events[i].change !== b.changes[i] || events[i].type !== b.types[i]) return false;
  return true;
}

const isChange = (e: WatchEvent): e is ChangeEvent => 'change' in e;

const bytesFrom = (frames: Buffer[], from: number): number => {
  let n = 0;
  for (let i = from; i < frames.length; i++) n += frames[i].length;
  return n;
};

/** A line's frames in a framing. */
const pushed = (line: Buffer, framing: Framing): Buffer[] => {
  const frames: Buffer[] = [];
  pushLine(line, framing, frames);
  return frames;
};

type Encoder = (e: WatchEvent, into: Buffer[]) => void;

/** How a watch's initial objects are encoded, one watcher at a time, without keeping their JSON. */
export type InitialReads = Pick<ObjectReads, 'peek' | 'transientJson'>;

/**
 * Encodes events for one watcher into frames. A change's frames are made once per (type, apiVersion,
 * framing) and shared by every watcher that receives them (pushChange).
 */
function encoderFor(reads: InitialReads, spec: WatchSpec, framing: Framing): Encoder {
  const line = (type: WatchEventType, json: string | Buffer, into: Buffer[]) => pushLine(eventLine(type, json), framing, into);
  const rendered = (o: KubeObject) => JSON.stringify(spec.render!(o));
  return (e, into) => {
    if (e.type === 'BOOKMARK') {
      const metadata = { resourceVersion: String(e.seq), ...(e.initialEventsEnd ? { annotations: { [INITIAL_EVENTS_END]: 'true' } } : {}) };
      return line('BOOKMARK', JSON.stringify({ kind: spec.kind.kind, apiVersion: spec.apiVersion, metadata }), into);
    }
    if ('initial' in e) return line('ADDED', spec.render ? rendered(reads.peek(e.initial)) : reads.transientJson(e.initial, spec.apiVersion), into);
    if (spec.render) return line(e.type, rendered(e.change.cur.obj), into);
    pushChange(e.change, e.type, spec.apiVersion, framing, into);
  };
}

/**
 * make(frames), made once for the watchers given the same frames one after another: a pointer
 * comparison with the previous watcher's frames finds the bytes already made.
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
