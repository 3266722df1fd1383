import { StoredEntry } from '../log/codec.js';
import type { LogEntry } from '../log/log.js';
import { bytesOf, LazyObject, storedOf } from './stored-object.js';

/** The entries at seqs (ascending), in order, in pages (log/entries-at.ts); keyOf(i) is the key seqs[i] wrote. */
export type ReadEntries = (seqs: ArrayLike<number>, keyOf: (i: number) => string) => AsyncIterable<(LogEntry | undefined)[]>;

/** One entry read on the calling thread (Log.entrySync). */
type ReadEntry = (seq: number) => LogEntry | undefined;

/**
 * The objects an index-only checkpoint names (each live key's newest revision), read from the log in
 * one pass in seq order rather than a get per object: the log stores entries in seq order, so the
 * pass reads each block of its tables once (log/leveldb-ordered-read.ts). Each object stays the
 * bytes the log read, a range of the buffers the pass copied them into; a part's slots are made from
 * them when first used, as a whole checkpoint's are from its file.
 *
 * Where the log reads one entry on the calling thread (readOne), nothing need be read before the view
 * is used: a part made before the pass reached its objects reads each of them so (a seek each,
 * tens of µs), and the pass (readUnread) runs after the start is ready. A restart from a copy along
 * the log at a million objects is then ready when the heads are read, as one from a whole checkpoint
 * is, instead of after reading 1.3 GB. The objects stay in the log until the part is made: compaction
 * never passes the newest checkpoint, and a newer one is saved only from made parts.
 */
export class LogObjects {
  private readonly seqs: number[] = [];
  private readonly keys: string[] = [];
  /** Where each object's bytes are, made once their number is known (read): filled in seq order, not in number order. */
  private buffers: (Buffer | undefined)[] = [];
  private starts = new Float64Array(0);
  private ends = new Float64Array(0);

  constructor(private readonly readOne?: ReadEntry) {}

  get size(): number {
    return this.seqs.length;
  }

  /** Whether objects are read when first used (readOne), so the view needs none read before it is used. */
  get onUse(): boolean {
    return this.readOne !== undefined;
  }

  /** Notes an object to read: key's at rev. Returns its number. */
  want(key: string, rev: number): number {
    this.keys.push(key);
    return this.seqs.push(rev) - 1;
  }

  /** Makes room for every object noted (once they are all noted). */
  noted(): void {
    const n = this.seqs.length;
    this.buffers = new Array<Buffer | undefined>(n);
    this.starts = new Float64Array(n);
    this.ends = new Float64Array(n);
  }

  /** Reads every object noted; false when the log no longer holds one as a put of its key (compacted). */
  async read(read: ReadEntries): Promise<boolean> {
    this.noted();
    return (await this.pass(read, Uint32Array.from(this.seqs.keys()), () => false)) === 'whole';
  }

  /**
   * Reads, in one pass, the objects not read yet (no part asked for them): what a start does once it
   * is ready. Stops between pages once stopped() says so; an object the log no longer holds is left to
   * its part, whose read then says so.
   */
  async readUnread(read: ReadEntries, stopped: () => boolean): Promise<void> {
    const unread: number[] = [];
    for (let o = 0; o < this.seqs.length; o++) if (this.buffers[o] === undefined) unread.push(o);
    await this.pass(read, unread, stopped);
  }

  /** Reads objects (numbers), in seq order; 'whole' when each was there as a put of its key. */
  private async pass(read: ReadEntries, objects: ArrayLike<number>, stopped: () => boolean): Promise<'whole' | 'short' | 'stopped'> {
    const n = objects.length;
    const order = bySeq(Array.from(objects, (o) => this.seqs[o]));
    const at = (j: number) => objects[order ? order[j] : j];
    const seqs = new Float64Array(n);
    for (let j = 0; j < n; j++) seqs[j] = this.seqs[at(j)];
    let j = 0;
    let whole = true;
    for await (const page of read(seqs, (k) => this.keys[at(k)])) {
      for (const e of page) {
        const o = at(j++);
        if (e === undefined || e.type !== 'put' || e.key !== this.keys[o]) whole = false;
        else if (this.buffers[o] === undefined) this.hold(o, e);
      }
      if (!whole && !this.readOne) return 'short';
      if (stopped()) return 'stopped';
    }
    return whole && j === n ? 'whole' : 'short';
  }

  /** Object o (as want numbered it): read now when the log reads one entry at once and no pass has read it yet. */
  object(o: number): LazyObject {
    if (this.buffers[o] === undefined) {
      const e = this.readOne?.(this.seqs[o]);
      if (e === undefined || e.type !== 'put' || e.key !== this.keys[o])
        throw new Error(`a checkpoint along the log names ${this.keys[o]} at ${this.seqs[o]}, which the log no longer holds as a put of it`);
      this.hold(o, e);
    }
    return new LazyObject(this.keys[o], this.seqs[o], this.buffers[o]!, this.starts[o], this.ends[o]);
  }

  /** How many bytes objects from..to (exclusive) hold: those read so far. */
  bytes(from: number, to: number): number {
    let n = 0;
    for (let o = from; o < to; o++) n += this.ends[o] - this.starts[o];
    return n;
  }

  private hold(o: number, e: LogEntry): void {
    if (e instanceof StoredEntry) {
      // A range of the buffer the log read it into, not a view object per object.
      this.buffers[o] = e.bytes;
      this.starts[o] = e.start;
      this.ends[o] = e.end;
      return;
    }
    const bytes = bytesOf(storedOf(e, e.key, e.seq));
    this.buffers[o] = bytes;
    this.starts[o] = 0;
    this.ends[o] = bytes.length;
  }
}

/**
 * The numbers of seqs ordered by seq; undefined when they are in order already. A seq is written by
 * one entry, so no two are equal: seq and number packed into one float (while exact) sort natively,
 * about ten times faster than a comparator over a million.
 */
function bySeq(seqs: readonly number[]): ArrayLike<number> | undefined {
  const n = seqs.length;
  let max = 0;
  let sorted = true;
  for (let i = 0; i < n; i++) {
    if (i > 0 && seqs[i] < seqs[i - 1]) sorted = false;
    if (seqs[i] > max) max = seqs[i];
  }
  if (sorted) return undefined;
  if ((max + 1) * n > Number.MAX_SAFE_INTEGER) return Uint32Array.from(seqs.keys()).sort((a, b) => seqs[a] - seqs[b]);
  const packed = new Float64Array(n);
  for (let i = 0; i < n; i++) packed[i] = seqs[i] * n + i;
  packed.sort();
  const order = new Uint32Array(n);
  for (let j = 0; j < n; j++) order[j] = packed[j] % n;
  return order;
}
