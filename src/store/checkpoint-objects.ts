import { StoredEntry } from '../log/codec.js';
import type { LogEntry } from '../log/log.js';
import { bytesOf, LazyObject, storedOf } from './stored-object.js';

/** The entries at seqs (ascending), in order, in pages (log/entries-at.ts); keyOf(i) is the key seqs[i] wrote. */
export type ReadEntries = (seqs: ArrayLike<number>, keyOf: (i: number) => string) => AsyncIterable<(LogEntry | undefined)[]>;

/**
 * The objects an index-only checkpoint names (each live key's newest revision), read from the log in
 * one pass in seq order rather than a get per object: the log stores entries in seq order, so the
 * pass reads each block of its tables once (log/leveldb-ordered-read.ts). Each object stays the
 * bytes the log read, a range of the buffers the pass copied them into; a part's slots are made from
 * them when first used, as a whole checkpoint's are from its file.
 */
export class LogObjects {
  private readonly seqs: number[] = [];
  private readonly keys: string[] = [];
  /** Where each object's bytes are, made once their number is known (read): filled in seq order, not in number order. */
  private buffers: Buffer[] = [];
  private starts = new Float64Array(0);
  private ends = new Float64Array(0);

  get size(): number {
    return this.seqs.length;
  }

  /** Notes an object to read: key's at rev. Returns its number. */
  want(key: string, rev: number): number {
    this.keys.push(key);
    return this.seqs.push(rev) - 1;
  }

  /** Reads every object noted; false when the log no longer holds one as a put of its key (compacted). */
  async read(read: ReadEntries): Promise<boolean> {
    const n = this.seqs.length;
    this.buffers = new Array<Buffer>(n);
    this.starts = new Float64Array(n);
    this.ends = new Float64Array(n);
    const order = bySeq(this.seqs);
    let seqs: ArrayLike<number> = this.seqs;
    if (order) {
      const sorted = new Float64Array(n);
      for (let j = 0; j < n; j++) sorted[j] = this.seqs[order[j]];
      seqs = sorted;
    }
    let j = 0;
    for await (const page of read(seqs, (k) => this.keys[order ? order[k] : k])) {
      for (const e of page) {
        const o = order ? order[j] : j;
        j++;
        if (e === undefined || e.type !== 'put' || e.key !== this.keys[o]) return false;
        this.hold(o, e);
      }
    }
    return j === n;
  }

  /** Object o (as want numbered it). */
  object(o: number): LazyObject {
    return new LazyObject(this.keys[o], this.seqs[o], this.buffers[o], this.starts[o], this.ends[o]);
  }

  /** How many bytes objects from..to (exclusive) hold. */
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
