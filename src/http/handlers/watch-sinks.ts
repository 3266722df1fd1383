/**
 * Where a watch writes its events: a chunked HTTP response or a WebSocket. Their bytes for a batch are
 * made once for the watchers handed it one after another (SharedFrames, held by WatchStreams).
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { ChangeEvent, FramedBatch, Framing } from './watch-frames.js';

/**
 * Where a watch writes its events: an HTTP chunked stream (a JSON line per event) or a WebSocket (a
 * text frame per event). A batch of events is one socket write.
 */
export interface WatchSink {
  /** How the sink frames an event line; the key of the frames a change shares between watchers. */
  readonly framing: Framing;
  /** Writes the frames of one batch as one socket write. */
  write(frames: Buffer[]): void;
  /**
   * Writes a batch of change events framed once for every watcher given the same (framedBatch),
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

/** The bytes a sink writes for a batch, made once for every watcher given the same batch. */
export interface SharedFrames {
  /** The frames joined into one buffer. */
  joined(frames: Buffer[]): Buffer;
  /** The frames as one HTTP/1.1 chunk. */
  chunk(frames: Buffer[]): Buffer;
  /** The change events framed into one buffer: an HTTP/1.1 chunk (chunked) or the lines alone. */
  batch(events: readonly ChangeEvent[], apiVersion: string, chunked: boolean): FramedBatch;
}

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
export function httpSink(res: ServerResponse, shared: SharedFrames, graceMs: number): WatchSink {
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
      if (direct) socket.write(shared.chunk(frames));
      else res.write(shared.joined(frames));
    },
    writeChanges(events, apiVersion) {
      if (res.destroyed || res.writableEnded || events.length === 0) return [];
      const batch = shared.batch(events, apiVersion, direct);
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
export function webSocketSink(ws: WebSocket, socket: Duplex, shared: SharedFrames, graceMs: number): WatchSink {
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
      socket.write(shared.joined(frames));
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
