/**
 * A committed change, and the one owner of its encode-once cache: the JSON of its object and the
 * watch-event bytes made from it are encoded by the first reader that asks, then shared by every
 * other watcher and by the write's answer (serialize once: the watch fan-out's speed). Only this
 * class writes the cache; the other rooms ask it for bytes.
 */
import { transcodeInto } from '../log/msgpack-json.js';
import { encodeObject, LazyObject, restamped, storedApiVersion, type StoredObject } from './stored-object.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** A committed change as the view saw it: the watch stream is made of these. */
export class Change {
  /**
   * cur's JSON at its stored apiVersion, made by the first watcher the change was sent to (often a
   * view of that watcher's framed batch). Kept here, not on cur: a stored object that kept the JSON
   * of its watch event held a second copy of every object for as long as it stayed current (a replay
   * of a million objects, gigabytes).
   */
  private json: Buffer | undefined;
  /** Bytes made from the change for its watchers (an event line, a frame header), by what they are. */
  private made: Map<string, Buffer> | undefined;

  constructor(
    readonly type: ChangeType,
    readonly seq: number,
    readonly key: string,
    /** The object after the change; for DELETED, its last state stamped with the delete's version. */
    readonly cur: StoredObject,
    /** The object before the change (absent for ADDED): selectors need it to turn "stopped matching" into DELETED. */
    readonly prev?: StoredObject,
  ) {}

  /** cur's JSON at its stored apiVersion if a watcher made it: the write's answer is then these same bytes. */
  get encodedJson(): Buffer | undefined {
    return this.json;
  }

  /** cur's JSON made by its writer while the batch was written (encodeObject's bytes of the same tree): watchers take it as theirs. */
  encodedBy(json: Buffer): void {
    this.json ??= json;
  }

  /**
   * cur as JSON at apiVersion for a watcher: encoded first where the version cannot be read for free
   * (bytes nobody decoded become JSON without a tree, kept, and the write's answer is then these same
   * bytes); where the version is free to read (a tree, or JSON already made), a watcher of another
   * version neither makes nor keeps the stored JSON no one may read.
   */
  jsonAt(apiVersion: string): string | Buffer {
    const s = this.cur;
    if (this.json === undefined && s instanceof LazyObject && !s.isDecoded) this.json = encodeObject(s);
    if (storedApiVersion(s) !== apiVersion) return restamped(s.obj, apiVersion);
    return (this.json ??= encodeObject(s));
  }

  /**
   * Writes cur as JSON at apiVersion into out at `at` (out, or a larger copy of it, is returned with
   * where the JSON ends). An object still held as the bytes the log read is transcoded from them
   * straight into out, and the change keeps a view of that JSON there: a watcher that gets it in
   * another batch, and the write's answer, reuse it. A watcher of another apiVersion gets it re-stamped.
   */
  writeJsonInto(out: Buffer, at: number, apiVersion: string): { out: Buffer; end: number } {
    const s = this.cur;
    if (!this.json && s instanceof LazyObject && !s.isDecoded && !s.json) {
      const raw = s.raw;
      // Stamped with the version that wrote it: a shared log's stored bytes do not carry it (log/stamp.ts).
      const t = transcodeInto(raw, 0, raw.length, out, at, s.seq);
      if (t) {
        s.noteApiVersion(t.apiVersion);
        // A view of out: its writer writes after it, or into a grown copy (this one unchanged).
        if (t.apiVersion === apiVersion) {
          this.json = t.out.subarray(at, t.end);
          return { out: t.out, end: t.end };
        }
        // Bytes of its own: the re-stamped object is written over these.
        this.json = Buffer.from(t.out.subarray(at, t.end));
        out = t.out;
      }
    }
    const json = (this.json ??= encodeObject(s));
    return copyInto(out, at, storedApiVersion(s) === apiVersion ? json : restamped(s.obj, apiVersion));
  }

  /** The bytes of `what` made from this change (an event line in some framing): made by the first watcher that asks, then shared. */
  bytes(what: string, make: () => Buffer): Buffer {
    const made = (this.made ??= new Map());
    let b = made.get(what);
    if (!b) made.set(what, (b = make()));
    return b;
  }
}

/** b written into out at `at`, in a larger copy of out when it does not fit. */
function copyInto(out: Buffer, at: number, b: Buffer | string): { out: Buffer; end: number } {
  const n = typeof b === 'string' ? Buffer.byteLength(b) : b.length;
  if (at + n > out.length) {
    const grown = Buffer.allocUnsafe(Math.max(2 * out.length, at + n));
    out.copy(grown, 0, 0, at);
    out = grown;
  }
  return { out, end: at + (typeof b === 'string' ? out.write(b, at) : b.copy(out, at)) };
}
