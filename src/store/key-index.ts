/**
 * Which log entry held a key at a version (etcd's keyIndex, flattened): each key keeps the sequence
 * numbers that wrote it, a delete stored as the negated sequence. "What was K at R" is a binary search
 * for the newest revision <= R, then one log read by sequence number, never a replay.
 */
export class KeyIndex {
  private readonly revs = new Map<string, number[]>();

  /** Adds a revision; true when the key is new to the index (one lookup: a replay calls this a million times). */
  record(key: string, seq: number, deleted: boolean): boolean {
    const list = this.revs.get(key);
    const r = deleted ? -seq : seq;
    if (list) {
      list.push(r);
      return false;
    }
    this.revs.set(key, [r]);
    return true;
  }

  /** The sequence that held key at version rv, or undefined if the key did not exist then. */
  at(key: string, rv: number): number | undefined {
    const list = this.revs.get(key);
    if (!list) return undefined;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Math.abs(list[mid]) <= rv) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return undefined;
    const r = list[lo - 1];
    return r < 0 ? undefined : r;
  }

  /** The revision before seq for key (a put's sequence), used to find a watch event's previous object. */
  before(key: string, seq: number): number | undefined {
    return this.at(key, seq - 1);
  }

  /**
   * The sequences compaction to horizon h keeps: per key, the newest revision below h when it is a
   * put (what an Exact read at h - 1 and every later version up to the key's next write returns).
   */
  keepAt(h: number): Set<number> {
    const keep = new Set<number>();
    for (const list of this.revs.values()) {
      const i = newestBelow(list, h);
      if (i >= 0 && list[i] > 0) keep.add(list[i]);
    }
    return keep;
  }

  /**
   * Drops the revisions compaction to horizon h deleted; yields each key with whether it was
   * forgotten entirely (nothing of it left at or after h - 1).
   */
  *compact(h: number): IterableIterator<[string, boolean]> {
    for (const [key, list] of this.revs) {
      const i = newestBelow(list, h);
      if (i < 0) continue;
      // A put below h stays (it is the state at h - 1); a delete below h is just absence.
      const from = list[i] > 0 ? i : i + 1;
      if (from === 0) continue;
      if (from >= list.length) {
        this.revs.delete(key);
        yield [key, true];
      } else {
        list.splice(0, from);
        yield [key, false];
      }
    }
  }

  has(key: string): boolean {
    return this.revs.has(key);
  }

  get size(): number {
    return this.revs.size;
  }

  entries(): IterableIterator<[string, number[]]> {
    return this.revs.entries();
  }

  static from(entries: Iterable<[string, number[]]>): KeyIndex {
    const k = new KeyIndex();
    for (const [key, list] of entries) k.revs.set(key, list);
    return k;
  }
}

/** Index of the newest revision with |rev| < h, or -1. */
function newestBelow(list: readonly number[], h: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Math.abs(list[mid]) < h) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
