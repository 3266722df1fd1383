/**
 * A batch of watch events framed once for every watcher it is sent to. A replay, or a commit batch of
 * thousands of changes, to each watcher of a collection made a buffer per event line, another
 * joining them and another for the HTTP chunk around them: three copies of every event and a pooled
 * buffer each, most of a fast replay's time. Here each change's JSON is transcoded from its stored
 * bytes (src/log/msgpack-json.ts) straight into the batch's one buffer, inside the chunk's framing,
 * and a watcher handed the same changes as the watcher before it is handed the same bytes. The
 * change keeps a view of its JSON in that buffer (Change.json): a watcher that gets it in another
 * batch, and the write's answer, reuse it.
 */
import { encodeObject, LazyObject, storedApiVersion, transcodeInto, type Change, type ChangeType } from '../../registry/stored.js';

export interface ChangeEvent {
  type: ChangeType;
  change: Change;
}

/** Room before the lines for the chunk's size line ("<hex>\r\n"), written once the size is known. */
const RESERVED = 16;
const PREFIX: Record<ChangeType, Buffer> = {
  ADDED: Buffer.from('{"type":"ADDED","object":'),
  MODIFIED: Buffer.from('{"type":"MODIFIED","object":'),
  DELETED: Buffer.from('{"type":"DELETED","object":'),
};
const LINE_END = Buffer.from('}\n');
const CRLF = Buffer.from('\r\n');

/** A batch's bytes, and the size of each event's line in it (what the watch metrics count). */
export interface FramedBatch {
  bytes: Buffer;
  sizes: readonly number[];
}

/** The last batch framed: a watcher given the same changes (by identity), in the same framing, gets its bytes. */
let last: { changes: Change[]; types: ChangeType[]; apiVersion: string; chunked: boolean; batch: FramedBatch } | undefined;

/**
 * The events' lines, one JSON line each, as one buffer: an HTTP/1.1 chunk (chunked) or the lines
 * alone. An object stored at another apiVersion than the watcher's is re-stamped, as the per-event
 * path does (watch-stream.ts).
 */
export function framedBatch(events: readonly ChangeEvent[], apiVersion: string, chunked: boolean): FramedBatch {
  if (last && sameBatch(last, events, apiVersion, chunked)) return last.batch;
  const w = new BatchWriter(events.length);
  const sizes = new Array<number>(events.length);
  for (let i = 0; i < events.length; i++) {
    const { type, change } = events[i];
    const start = w.length;
    w.bytes(PREFIX[type]);
    w.object(change, apiVersion);
    w.bytes(LINE_END);
    sizes[i] = w.length - start;
  }
  const batch = { bytes: chunked ? w.chunk() : w.lines(), sizes };
  last = { changes: events.map((e) => e.change), types: events.map((e) => e.type), apiVersion, chunked, batch };
  return batch;
}

function sameBatch(b: NonNullable<typeof last>, events: readonly ChangeEvent[], apiVersion: string, chunked: boolean): boolean {
  if (b.changes.length !== events.length || b.apiVersion !== apiVersion || b.chunked !== chunked) return false;
  for (let i = 0; i < events.length; i++) if (events[i].change !== b.changes[i] || events[i].type !== b.types[i]) return false;
  return true;
}

/** One growing buffer the batch is written into, with room for the chunk's size line before it. */
class BatchWriter {
  private out: Buffer;
  private o = RESERVED;

  constructor(events: number) {
    // About what a batch of Events takes, so that it is seldom grown.
    this.out = Buffer.allocUnsafe(RESERVED + Math.min(64 << 20, 2048 * events + 64));
  }

  /** Bytes written so far. */
  get length(): number {
    return this.o;
  }

  bytes(b: Buffer | string): void {
    const n = typeof b === 'string' ? Buffer.byteLength(b) : b.length;
    this.room(n);
    this.o += typeof b === 'string' ? this.out.write(b, this.o) : b.copy(this.out, this.o);
  }

  /**
   * The change's object as the watcher sees it: its stored JSON (the change's, or transcoded here
   * from its stored bytes, the change then keeping a view of it) when the watcher asked for the
   * stored apiVersion, else re-stamped.
   */
  object(c: Change, apiVersion: string): void {
    const s = c.cur;
    if (!c.json && s instanceof LazyObject && !s.isDecoded && !s.json) {
      const raw = s.raw;
      // Stamped with the version that wrote it: a shared log's stored bytes do not carry it (log/stamp.ts).
      const t = transcodeInto(raw, 0, raw.length, this.out, this.o, s.seq);
      if (t) {
        s.noteApiVersion(t.apiVersion);
        this.out = t.out;
        if (t.apiVersion === apiVersion) {
          // A view of this buffer: later writes go after it, or into a grown copy (this one unchanged).
          c.json = t.out.subarray(this.o, t.end);
          this.o = t.end;
          return;
        }
        // Bytes of its own: the re-stamped object is written over these.
        c.json = Buffer.from(t.out.subarray(this.o, t.end));
      }
    }
    const json = (c.json ??= encodeObject(s));
    if (storedApiVersion(s) === apiVersion) this.bytes(json);
    else this.bytes(JSON.stringify({ ...s.obj, apiVersion }));
  }

  /** The lines as an HTTP chunk: its size in hex and CRLF before them, CRLF after. */
  chunk(): Buffer {
    const size = this.o - RESERVED;
    this.bytes(CRLF);
    const head = `${size.toString(16)}\r\n`;
    const start = RESERVED - head.length;
    this.out.write(head, start, 'latin1');
    return this.out.subarray(start, this.o);
  }

  lines(): Buffer {
    return this.out.subarray(RESERVED, this.o);
  }

  private room(n: number): void {
    if (this.o + n <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.out.length, this.o + n));
    this.out.copy(grown, 0, 0, this.o);
    this.out = grown;
  }
}
