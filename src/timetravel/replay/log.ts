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
import { Subject } from 'rxjs/internal/Subject';
import type { Observable } from 'rxjs/internal/Observable';
import { readBounds } from '../../log/log-skeleton.js';
import { LogError, type Appended, type Log, type LogEntry, type ReadOptions, type SavedCheckpoint } from '../../log/log.js';

/** Where the entries from `from` on are read: the history being replayed. */
export interface ReplaySource {
  /** Entries from..to in pages, in order. */
  entries(from: number, to: number): AsyncIterable<LogEntry[]>;
  /** One entry by sequence number (undefined when there is none). */
  entry(seq: number): Promise<LogEntry | undefined>;
}

export class ReplayLog implements Log {
  /** One writer: the replay, revealing the recorded entries in their order. */
  readonly shared = false;
  private last: number;
  private closed = false;
  private readonly subject = new Subject<LogEntry[]>();
  readonly committed$: Observable<LogEntry[]> = this.subject.asObservable();

  /**
   * state: the objects at from - 1, each at the version that wrote it, in ascending version order
   * (checked). The log starts with every version below `from` applied.
   */
  constructor(
    private readonly state: readonly LogEntry[],
    private readonly from: number,
    private readonly source: ReplaySource,
  ) {
    for (let i = 0; i < state.length; i++) {
      const seq = state[i].seq;
      if (seq >= from || (i > 0 && seq <= state[i - 1].seq)) throw new Error(`replay state: entry ${seq} (${state[i].key}) is out of order or not below ${from}`);
    }
    this.last = from - 1;
  }

  get lastSeq(): number {
    return this.last;
  }

  get firstSeq(): number {
    return this.from;
  }

  async open(): Promise<void> {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.subject.complete();
  }

  /** Reveals the next entries of the source (after the last committed, in order) and hands them to the store at once. */
  commit(entries: LogEntry[]): void {
    if (entries.length === 0 || this.closed) return;
    for (const e of entries) {
      if (e.seq <= this.last) throw new Error(`log entry ${e.seq} (${e.key}) comes after ${this.last}: the recording is out of order`);
      this.last = e.seq;
    }
    this.subject.next(entries);
  }

  append(): Appended {
    throw new LogError('CLOSED', 'the replay serves a recorded log: it takes no writes');
  }

  async *read(from: number, to?: number, opts?: ReadOptions): AsyncIterable<LogEntry[]> {
    const { start, end } = readBounds(from, to, opts, this.from, this.last);
    if (start > end) return;
    if (start < this.from) {
      const kept = this.state.slice(this.stateIndex(start), this.stateIndex(Math.min(end, this.from - 1) + 1));
      for (let i = 0; i < kept.length; i += 1000) yield kept.slice(i, i + 1000);
    }
    if (end >= this.from) yield* this.source.entries(Math.max(start, this.from), end);
  }

  async get(seq: number): Promise<LogEntry | undefined> {
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.last) return undefined;
    if (seq >= this.from) return this.source.entry(seq);
    const e = this.state[this.stateIndex(seq)];
    return e?.seq === seq ? e : undefined;
  }

  /** Never compacted: the recording is the history, and it is read only. */
  async compact(): Promise<void> {}

  /** Never checkpointed: the store it serves is never restarted. */
  async saveCheckpoint(): Promise<void> {}

  async loadCheckpoint(): Promise<SavedCheckpoint | undefined> {
    return undefined;
  }

  /** The index of the first state entry at or after seq. */
  private stateIndex(seq: number): number {
    let lo = 0;
    let hi = this.state.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.state[mid].seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
