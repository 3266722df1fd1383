/**
 * A sorted set of strings. Lists and pages walk it in order and start after a key (the continue
 * token), so a page costs its size, not the collection's. Keys live in chunks of at most CHUNK keys,
 * so an insert moves at most one chunk's tail: at a million keys a flat array's splice would move
 * megabytes per create, while a chunked list stays in the microseconds without a tree's allocations.
 */
const CHUNK = 512;

export class SortedKeys {
  private chunks: string[][] = [];
  private count = 0;
  /** Where the key added last was put (see add). */
  private fingerChunk = -1;
  private fingerAt = 0;

  /** Builds from keys in any order: one sort instead of n inserts (startup). */
  static of(keys: Iterable<string>): SortedKeys {
    // The default sort orders by UTF-16 code units, as < does, and is several times faster than a comparator.
    return SortedKeys.ofSorted([...new Set(keys)].sort());
  }

  /** Builds from keys already sorted and distinct (the caller vouches for both). */
  static ofSorted(sorted: readonly string[]): SortedKeys {
    const s = new SortedKeys();
    for (let i = 0; i < sorted.length; i += CHUNK) s.chunks.push(sorted.slice(i, i + CHUNK));
    s.count = sorted.length;
    return s;
  }

  get size(): number {
    return this.count;
  }

  /** Every key, in order, as an array of its own (a snapshot). A loop: flat() took 100 ms at 1M keys, this 15–20 ms. */
  toArray(): string[] {
    const out = new Array<string>(this.count);
    let i = 0;
    for (const chunk of this.chunks) for (let j = 0; j < chunk.length; j++) out[i++] = chunk[j];
    return out;
  }

  add(k: string): void {
    const last = this.chunks[this.chunks.length - 1];
    // A key after every other (names made in order: a replay's creates, generated names) is appended
    // without the two searches, which were a sixth of a replay's CPU at a million keys (RESULTS 53).
    // Chunks filled this way stay CHUNK long, as ofSorted makes them.
    if (last === undefined || last[last.length - 1] < k) {
      if (last === undefined || last.length >= CHUNK) this.chunks.push([k]);
      else last.push(k);
      this.count++;
      this.finger(this.chunks.length - 1, this.chunks[this.chunks.length - 1].length - 1);
      return;
    }
    // Right after the key added last (names made in order but not in key order: seed-1234 after
    // seed-1233, both between seed-123 and seed-124): two comparisons instead of the two searches, a
    // fifth of a replay's CPU at a million such keys (RESULTS 62). Any two neighbours around k are
    // its place, so a finger that chunk splits or deletes moved is still right where its
    // comparisons hold, and else unused.
    const fc = this.fingerChunk;
    const c = this.chunks[fc];
    const at = this.fingerAt;
    if (c !== undefined && at < c.length && c[at] < k && (at + 1 < c.length ? k < c[at + 1] : fc + 1 === this.chunks.length || k < this.chunks[fc + 1][0])) {
      this.insert(fc, at + 1, k);
      return;
    }
    const ci = this.chunkFor(k);
    const chunk = this.chunks[ci];
    const i = lowerBound(chunk, k);
    if (chunk[i] === k) return;
    this.insert(ci, i, k);
  }

  /** Inserts k at i of chunk ci (its place), splitting the chunk when it has grown past 2 × CHUNK. */
  private insert(ci: number, i: number, k: string): void {
    const chunk = this.chunks[ci];
    chunk.splice(i, 0, k);
    this.count++;
    if (chunk.length <= 2 * CHUNK) return this.finger(ci, i);
    this.chunks.splice(ci, 1, chunk.slice(0, CHUNK), chunk.slice(CHUNK));
    this.finger(i < CHUNK ? ci : ci + 1, i < CHUNK ? i : i - CHUNK);
  }

  private finger(ci: number, i: number): void {
    this.fingerChunk = ci;
    this.fingerAt = i;
  }

  delete(k: string): void {
    if (this.chunks.length === 0) return;
    const ci = this.chunkFor(k);
    const chunk = this.chunks[ci];
    const i = lowerBound(chunk, k);
    if (chunk[i] !== k) return;
    chunk.splice(i, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(ci, 1);
  }

  has(k: string): boolean {
    if (this.chunks.length === 0) return false;
    const chunk = this.chunks[this.chunkFor(k)];
    return chunk[lowerBound(chunk, k)] === k;
  }

  /** Keys with the given prefix that are > after (when given), in order. */
  *range(prefix: string, after?: string): IterableIterator<string> {
    if (this.chunks.length === 0) return;
    const start = after !== undefined && after > prefix ? after : prefix;
    let ci = this.chunkFor(start);
    let i = lowerBound(this.chunks[ci], start);
    for (; ci < this.chunks.length; ci++, i = 0) {
      const chunk = this.chunks[ci];
      for (; i < chunk.length; i++) {
        const k = chunk[i];
        if (k === after) continue;
        if (!k.startsWith(prefix)) {
          if (k > prefix) return;
          continue;
        }
        yield k;
      }
    }
  }

  /** How many keys range(prefix, after) would yield, counting whole chunks without visiting their keys. */
  countRange(prefix: string, after?: string): number {
    if (this.chunks.length === 0) return 0;
    const start = after !== undefined && after > prefix ? after : prefix;
    let ci = this.chunkFor(start);
    let i = lowerBound(this.chunks[ci], start);
    if (this.chunks[ci][i] === after) i++;
    let n = 0;
    for (; ci < this.chunks.length; ci++, i = 0) {
      const chunk = this.chunks[ci];
      const last = chunk[chunk.length - 1];
      if (i === 0 && last.startsWith(prefix)) {
        n += chunk.length;
        continue;
      }
      for (; i < chunk.length; i++) {
        if (!chunk[i].startsWith(prefix)) return n;
        n++;
      }
    }
    return n;
  }

  /** The chunk whose range holds k: the first chunk whose last key is >= k, else the last chunk. */
  private chunkFor(k: string): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.chunks[mid];
      if (c[c.length - 1] < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function lowerBound(arr: string[], k: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
