/**
 * The log a replay serves: the recorded history itself, read where it lies, revealed up to the entry
 * the replay has reached. Writing each recorded entry into a new LevelDB only to read it back was
 * most of a replay's cost (a copy into a write batch, the write-ahead log, compactions of a gigabyte
 * nobody reads again), and the bytes are already in the recording or the data folder's log.
 *
 * Below `from` it holds the state the replay starts with, each object an entry at the version that
 * wrote it, as the entries a compaction kept below its horizon (so the store rebuilds its view from
 * them, and an Exact read at an old version finds them). From `from` on, entries come from the
 * source history by sequence number, and only up to the last one the replay committed (commit()):
 * the store applies each committed page and hands it to the watchers, and a watcher that falls
 * behind catches up from the source. The replay server takes no writes (its authorizer refuses
 * them), so append() is refused too.
 */
import { LogSkeleton, type Found } from '../../log/log-skeleton.js';
import { LogError, type Appended, type LogEntry, type SavedCheckpoint } from '../../log/log.js';

/** Where the entries from `from` on are read: the history being replayed. */
export interface ReplaySource {
  /** Entries from..to in pages, in order. */
  entries(from: number, to: number): AsyncIterable<LogEntry[]>;
  /** One entry by sequence number (undefined when there is none). */
  entry(seq: number): Promise<LogEntry | undefined>;
}

/**
 * On the log skeleton, as every backend: its open/close states, argument checks and read bounds are
 * theirs (test/timetravel/replay-log.test.ts runs the log contract on it). What is its own: entries
 * are revealed by commit(), never appended; below `from` only the kept state is read (as below a
 * compaction horizon); nothing is compacted or checkpointed.
 */
export class ReplayLog extends LogSkeleton {
  /** One writer: the replay, revealing the recorded entries in their order. */
  readonly shared = false;

  /**
   * kept: the objects at from - 1, each at the version that wrote it, in ascending version order
   * (checked). Once open, the log holds every version below `from`.
   */
  constructor(
    private readonly kept: readonly LogEntry[],
    private readonly from: number,
    private readonly source: ReplaySource,
  ) {
    super();
    for (let i = 0; i < kept.length; i++) {
      const seq = kept[i].seq;
      if (seq >= from || (i > 0 && seq <= kept[i - 1].seq)) throw new Error(`replay state: entry ${seq} (${kept[i].key}) is out of order or not below ${from}`);
    }
  }

  /** Reveals the next entries of the source (after the last committed, in order) and hands them to the store at once. */
  commit(entries: LogEntry[]): void {
    if (entries.length === 0 || !this.isOpen) return;
    for (const e of entries) {
      if (e.seq <= this.last) throw new Error(`log entry ${e.seq} (${e.key}) comes after ${this.last}: the recording is out of order`);
      this.last = e.seq;
    }
    this.subject.next(entries);
  }

  append(): Appended {
    this.checkWritable();
    throw new LogError('CLOSED', 'the replay serves a recorded log: it takes no writes');
  }

  /** The versions below `from` as a compaction's horizon leaves them: read only with `kept`. */
  protected async _open(): Promise<Found> {
    return { horizon: this.from, last: this.from - 1 };
  }

  protected async _drain(): Promise<void> {}

  protected async _close(): Promise<void> {}

  protected async *_read(start: number, end: number): AsyncIterable<LogEntry[]> {
    if (start < this.from) {
      const page = this.kept.slice(this.stateIndex(start), this.stateIndex(Math.min(end, this.from - 1) + 1));
      for (let i = 0; i < page.length; i += 1000) yield page.slice(i, i + 1000);
    }
    if (end >= this.from) yield* this.source.entries(Math.max(start, this.from), end);
  }

  protected async _get(seq: number): Promise<LogEntry | undefined> {
    if (seq >= this.from) return this.source.entry(seq);
    const e = this.kept[this.stateIndex(seq)];
    return e?.seq === seq ? e : undefined;
  }

  /** Never compacted: the recording is the history, and it is read only. */
  protected async _compact(): Promise<void> {}

  /** Never checkpointed: the store it serves is never restarted. */
  protected async _saveCheckpoint(): Promise<void> {}

  protected async _loadCheckpoint(): Promise<SavedCheckpoint | undefined> {
    return undefined;
  }

  /** The index of the first state entry at or after seq. */
  private stateIndex(seq: number): number {
    let lo = 0;
    let hi = this.kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.kept[mid].seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
