/**
 * When versions were applied, sampled: (time, newest applied seq) at most once per interval. Age-based
 * history retention asks it which versions are older than a moment. Entries are not timestamped in
 * the log, so after a restart everything replayed counts as applied at startup: retention by age
 * then keeps history up to one retention period longer than needed, never shorter.
 */
export class VersionClock {
  /** When each sample's interval began (spacing), when its seq was last noted, and that seq. */
  private readonly firsts: number[] = [];
  private readonly times: number[] = [];
  private readonly seqs: number[] = [];

  constructor(private readonly everyMs = 1000) {}

  /** Records that seq was applied at now (ms); within everyMs of the last sample's start, that sample moves forward. */
  note(seq: number, now: number): void {
    const n = this.times.length;
    if (n > 0 && now - this.firsts[n - 1] < this.everyMs) {
      this.times[n - 1] = now;
      this.seqs[n - 1] = seq;
      return;
    }
    this.firsts.push(now);
    this.times.push(now);
    this.seqs.push(seq);
  }

  /** The newest seq known to have been applied at or before time t, or undefined when nothing is known that old. */
  seqAt(t: number): number | undefined {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[mid] <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? this.seqs[lo - 1] : undefined;
  }

  /** Forgets samples before t that seqAt(t) and later times no longer need. */
  forget(t: number): void {
    let drop = 0;
    while (drop + 1 < this.times.length && this.times[drop + 1] <= t) drop++;
    if (drop > 0) {
      this.firsts.splice(0, drop);
      this.times.splice(0, drop);
      this.seqs.splice(0, drop);
    }
  }
}
