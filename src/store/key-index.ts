/**
 * Which log entries wrote one key (etcd's keyIndex, flattened): the sequence numbers of its writes, a
 * delete stored as the negated sequence. "What was K at R" is a binary search for the newest revision
 * <= R, then one log read by sequence number, never a replay. Most keys are written once: their one
 * revision is a number, and only a second write makes the array of older ones (a million arrays of
 * one number were a tenth of a replay's time and memory).
 */
export class Revisions {
  /** Older revisions, oldest first; undefined while the key was written once. */
  older: number[] | undefined = undefined;

  constructor(
    /** The newest revision. */
    public last: number,
  ) {}

  get length(): number {
    return (this.older?.length ?? 0) + 1;
  }

  /** The i-th revision, oldest first. */
  nth(i: number): number {
    const older = this.older;
    return older && i < older.length ? older[i] : this.last;
  }

  /** Every revision, oldest first. */
  list(): number[] {
    return this.older ? [...this.older, this.last] : [this.last];
  }

  /** The revisions at or below rv, oldest first, as a checkpoint stores them: one number when there is one. */
  upTo(rv: number): number | number[] | undefined {
    const i = this.newestAtOrBelow(rv);
    if (i < 0) return undefined;
    return i === 0 ? this.nth(0) : this.list().slice(0, i + 1);
  }

  record(seq: number, deleted: boolean): void {
    (this.older ??= []).push(this.last);
    this.last = deleted ? -seq : seq;
  }

  /** The sequence that held the key at version rv, or undefined if the key did not exist then. */
  at(rv: number): number | undefined {
    const i = this.newestAtOrBelow(rv);
    if (i < 0) return undefined;
    const r = this.nth(i);
    return r < 0 ? undefined : r;
  }

  /**
   * The sequence compaction to horizon h keeps: the newest revision below h when it is a put (what
   * an Exact read at h - 1 and every later version up to the key's next write returns).
   */
  keptAt(h: number): number | undefined {
    const i = this.newestAtOrBelow(h - 1);
    const r = i < 0 ? -1 : this.nth(i);
    return r > 0 ? r : undefined;
  }

  /**
   * Drops the revisions compaction to horizon h deleted (etcd's keyIndex.compact). false when nothing
   * of the key is left at or after h - 1: the caller forgets the key.
   */
  compact(h: number): boolean {
    const i = this.newestAtOrBelow(h - 1);
    if (i < 0) return true;
    // A put below h stays (it is the state at h - 1); a delete below h is just absence.
    const from = this.nth(i) > 0 ? i : i + 1;
    if (from >= this.length) return false;
    if (from > 0) {
      const rest = this.list().slice(from);
      this.last = rest[rest.length - 1];
      this.older = rest.length > 1 ? rest.slice(0, -1) : undefined;
    }
    return true;
  }

  /** Index of the newest revision with |rev| <= rv, or -1. */
  private newestAtOrBelow(rv: number): number {
    if (Math.abs(this.last) <= rv) return this.length - 1;
    const older = this.older;
    if (!older) return -1;
    let lo = 0;
    let hi = older.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Math.abs(older[mid]) <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }
}
