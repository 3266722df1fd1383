/**
 * The one framer of watch events: the JSON line of an event (`{"type":…,"object":…}` and a newline),
 * and how each transport carries it: a WebSocket text frame per line, or a batch of lines as one
 * HTTP/1.1 chunk. A change's frames are asked of the change (Change.bytes), so that every watcher
 * that receives them shares one encoding; a batch of changes is framed into one buffer (framedBatch).
 */
import type { Change, ChangeType } from '../../registry/reads.js';
import { frameHeader } from './websocket-frame.js';

export type WatchEventType = ChangeType | 'BOOKMARK' | 'ERROR';

/** How a sink frames an event line: alone (chunked HTTP frames the batch) or as a WebSocket text frame. */
export type Framing = 'line' | 'websocket';

const LINE_START: Record<WatchEventType, Buffer> = {
  ADDED: Buffer.from('{"type":"ADDED","object":'),
  MODIFIED: Buffer.from('{"type":"MODIFIED","object":'),
  DELETED: Buffer.from('{"type":"DELETED","object":'),
  BOOKMARK: Buffer.from('{"type":"BOOKMARK","object":'),
  ERROR: Buffer.from('{"type":"ERROR","object":'),
};
const LINE_END = Buffer.from('}\n');
const CRLF = Buffer.from('\r\n');

/** An event's line: its type, the object's JSON, a newline. */
export const eventLine = (type: WatchEventType, json: string | Buffer): Buffer => {
  const start = LINE_START[type];
  const n = typeof json === 'string' ? Buffer.byteLength(json) : json.length;
  const l = Buffer.allocUnsafe(start.length + n + LINE_END.length);
  let o = start.copy(l, 0);
  o += typeof json === 'string' ? l.write(json, o) : json.copy(l, o);
  LINE_END.copy(l, o);
  return l;
};

/** An event line's frames in a framing, pushed onto into. */
export function pushLine(line: Buffer, framing: Framing, into: Buffer[]): void {
  if (framing === 'websocket') into.push(frameHeader(line.length));
  into.push(line);
}

/** A change's frames for (type, apiVersion, framing), made by the first watcher that needs them and shared by the change (a WebSocket frame shares the line's bytes and adds only its header). */
export function pushChange(c: Change, type: ChangeType, apiVersion: string, framing: Framing, into: Buffer[]): void {
  const what = `${type} ${apiVersion}`;
  const line = c.bytes(what, () => eventLine(type, c.jsonAt(apiVersion)));
  if (framing === 'websocket') into.push(c.bytes(`${what} ws`, () => frameHeader(line.length)));
  into.push(line);
}

/**
 * A batch's frames as one buffer, so it is one socket write (and one HTTP chunk). Joined rather
 * than corked: a corked socket writes its many small buffers with one writev, and a streaming list
 * written that way grew the server by 100 MiB instead of 12–20 (test/watch/streaming-memory.test.ts).
 */
export const joined = (frames: Buffer[]): Buffer => (frames.length === 1 ? frames[0]! : Buffer.concat(frames));

/** A batch as one HTTP/1.1 chunk: its size in hex, the bytes, CRLF. */
export const chunk = (frames: Buffer[]): Buffer => {
  const body = joined(frames);
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, CRLF]);
};

export interface ChangeEvent {
  type: ChangeType;
  change: Change;
}

/** A batch's bytes, and the size of each event's line in it (what the watch metrics count). */
export interface FramedBatch {
  bytes: Buffer;
  sizes: readonly number[];
}

/** Room before the lines for the chunk's size line ("<hex>\r\n"), written once the size is known. */
const RESERVED = 16;

/**
 * The events' lines, one JSON line each, as one buffer: an HTTP/1.1 chunk (chunked) or the lines
 * alone. A replay, or a commit batch of thousands of changes, to each watcher of a collection made a
 * buffer per event line, another joining them and another for the HTTP chunk around them: three
 * copies of every event and a pooled buffer each, most of a fast replay's time. Here each change
 * writes its JSON (Change.writeJsonInto: transcoded from its stored bytes where it can) straight into
 * the batch's one buffer, inside the chunk's framing. An object stored at another apiVersion than
 * the watcher's is re-stamped, as pushChange does.
 */
export function framedBatch(events: readonly ChangeEvent[], apiVersion: string, chunked: boolean): FramedBatch {
  // About what a batch of Events takes, so that it is seldom grown.
  let out: Buffer = Buffer.allocUnsafe(RESERVED + Math.min(64 << 20, 2048 * events.length + 64));
  let o = RESERVED;
  const put = (b: Buffer) => {
    if (o + b.length > out.length) out = grown(out, o, b.length);
    o += b.copy(out, o);
  };
  const sizes = new Array<number>(events.length);
  for (let i = 0; i < events.length; i++) {
    const { type, change } = events[i];
    const start = o;
    put(LINE_START[type]);
    ({ out, end: o } = change.writeJsonInto(out, o, apiVersion));
    put(LINE_END);
    sizes[i] = o - start;
  }
  if (!chunked) return { bytes: out.subarray(RESERVED, o), sizes };
  const size = o - RESERVED;
  put(CRLF);
  const head = `${size.toString(16)}\r\n`;
  const start = RESERVED - head.length;
  out.write(head, start, 'latin1');
  return { bytes: out.subarray(start, o), sizes };
}

/** A larger copy of out's first `used` bytes, with room for n more. */
function grown(out: Buffer, used: number, n: number): Buffer {
  const g = Buffer.allocUnsafe(Math.max(2 * out.length, used + n));
  out.copy(g, 0, 0, used);
  return g;
}
