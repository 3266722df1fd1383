import { Subject } from 'rxjs';
import type { Observable } from 'rxjs';
import { LogError, type Appended, type Checkpoint, type Log, type LogEntry, type LogRecord, type ReadOptions, type SavedCheckpoint } from './log.js';

export interface LogOptions {
  /**
   * Told after each batch is acknowledged: how many records it held, and how long the oldest of
   * them waited from append() to acknowledgement (ms): the worst append latency in the batch.
   */
  onBatch?: (size: number, ms: number) => void;
}

/** What a backend finds on disk when it opens. */
export interface Found {
  /** Smallest and largest entry seq stored (undefined when there are none). */
  first?: number;
  last?: number;
  /** The stored compaction horizon, if a compaction ever ran. */
  horizon?: number;
  /** The commit time of the last entry, if it has one. */
  lastTime?: number;
}

type State = 'new' | 'opening' | 'open' | 'closing' | 'closed';

export const noop = () => {};

/**
 * What every backend shares, once: the open/close state machine, the broken state, argument checks,
 * lastSeq/firstSeq, committed$, compactions one at a time, and the checks around reads, gets and
 * checkpoints. How a record gets its seq differs (abstract-log.ts: one writer, group commit;
 * etcd/etcd-log.ts: a transaction per record), and each backend stores and finds bytes through
 * the protected _hooks (as abstract-level's public methods call _put, _batch, _iterator).
 */
export abstract class LogSkeleton implements Log {
  abstract readonly shared: boolean;
  private state: State = 'new';
  /** Why the log is broken (a write failed); set once, never cleared. */
  protected brokenBy: { cause: unknown; why: string } | undefined;
  protected last = 0;
  protected first = 1;
  private readonly compactions = new CompactionQueue();
  private closing: Promise<void> | undefined;
  private opening: Promise<void> | undefined;
  protected readonly subject = new Subject<LogEntry[]>();
  readonly committed$: Observable<LogEntry[]> = this.subject.asObservable();

  get lastSeq(): number {
    return this.last;
  }

  get firstSeq(): number {
    return this.first;
  }

  protected get isOpen(): boolean {
    return this.state === 'open';
  }

  open(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new Error(`a log opens once (this one is ${this.state})`));
    this.state = 'opening';
    this.opening = this._open().then(
      (found) => {
        // Everything below the horizon is gone even if a crash interrupted its deletion, and a log
        // compacted to empty still remembers its last seq through the horizon.
        this.last = Math.max(found.last ?? 0, (found.horizon ?? 1) - 1);
        this.first = Math.max(found.horizon ?? 1, found.first ?? this.last + 1);
        this._opened(found);
        this.state = 'open';
      },
      (err: unknown) => {
        this.state = 'closed';
        throw err;
      },
    );
    return this.opening;
  }

  abstract append(record: LogRecord): Appended;

  /** Refuses an append to a log not open, or broken by a failed write. */
  protected checkWritable(): void {
    if (this.state !== 'open') throw new LogError('CLOSED', `the log is ${this.state === 'new' ? 'not open' : this.state}`);
    if (this.brokenBy) throw this.brokenError();
  }

  protected breakWith(cause: unknown, why: string): void {
    this.brokenBy ??= { cause, why };
  }

  protected brokenError(): LogError {
    const cause = this.brokenBy?.cause;
    return new LogError('BROKEN', `the log is broken: ${this.brokenBy?.why ?? 'a write failed'} (${cause instanceof Error ? cause.message : String(cause)})`, undefined, { cause });
  }

  async *read(from: number, to?: number, opts?: ReadOptions): AsyncIterable<LogEntry[]> {
    this.checkReadable();
    const { start, end } = readBounds(from, to, opts, this.first, this.last);
    if (start > end) return;
    // No await between the check above and _read, which takes its snapshot synchronously: a
    // compaction that starts later cannot pull entries out from under this read.
    yield* this._read(start, end);
  }

  async get(seq: number, key?: string): Promise<LogEntry | undefined> {
    this.checkReadable();
    // Below the horizon only what a compaction kept is still stored (the backend answers undefined).
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.last) return undefined;
    return this._get(seq, key);
  }

  compact(below: number, keep: (seq: number) => boolean = () => false): Promise<void> {
    return this.compactions.run(below, async () => {
      if (this.state !== 'open') throw new LogError('CLOSED', `the log is ${this.state}`);
      // Entries not yet durable are never compacted: the horizon stays within lastSeq + 1.
      const horizon = Math.min(below, this.last + 1);
      if (horizon <= this.first) return;
      await this._compact(horizon, keep, () => {
        this.first = horizon;
      });
    });
  }

  async saveCheckpoint(cp: Checkpoint): Promise<void> {
    checkSeq(cp.seq, 'checkpoint seq');
    this.checkReadable();
    if (cp.seq > this.last) throw new LogError('FUTURE_SEQ', `checkpoint at ${cp.seq} is past the last durable seq ${this.last}`, cp.seq);
    await this._saveCheckpoint(cp);
  }

  async loadCheckpoint(): Promise<SavedCheckpoint | undefined> {
    this.checkReadable();
    return this._loadCheckpoint();
  }

  close(): Promise<void> {
    return (this.closing ??= this.closeNow());
  }

  private async closeNow(): Promise<void> {
    if (this.state === 'new') {
      this.state = 'closed';
      return;
    }
    if (this.state === 'opening') await this.opening?.catch(noop);
    if (this.state === 'closed') return; // its open failed
    // Synchronously with close(): an append after close() must fail, not slip in.
    this.state = 'closing';
    // What was appended before close is written and acknowledged, not dropped: its callers hold seqs.
    await this._drain();
    await this.compactions.idle;
    this.subject.complete();
    try {
      await this._close();
    } finally {
      this.state = 'closed';
    }
  }

  protected checkReadable(): void {
    if (this.state !== 'open' && this.state !== 'closing') {
      throw new LogError('CLOSED', `the log is ${this.state === 'new' ? 'not open' : this.state}`);
    }
  }

  /** Open the storage and report what is in it. */
  protected abstract _open(): Promise<Found>;
  /** After open found what is stored, before the log is open. */
  protected _opened(_found: Found): void {}
  /** Write and acknowledge what was appended before close (or fail it), once no more appends come. */
  protected abstract _drain(): Promise<void>;
  protected abstract _close(): Promise<void>;
  /**
   * Entries start..end (both within the log), in pages of at most 1000. Must take its snapshot
   * before it returns, synchronously: entries deleted afterwards are still read.
   */
  protected abstract _read(start: number, end: number): AsyncIterable<LogEntry[]>;
  /** The entry seq (1 <= seq <= lastSeq), undefined when compacted or never written. */
  protected abstract _get(seq: number, key?: string): Promise<LogEntry | undefined>;
  /**
   * Drop entries below horizon (> firstSeq) that keep() does not keep; moved() moves firstSeq, once
   * reads below it must fail: before anything is deleted.
   */
  protected abstract _compact(horizon: number, keep: (seq: number) => boolean, moved: () => void): Promise<void>;
  protected abstract _saveCheckpoint(cp: Checkpoint): Promise<void>;
  protected abstract _loadCheckpoint(): Promise<SavedCheckpoint | undefined>;
}

/** A log's compactions, one after another: a bad horizon rejects at once, a failed one does not stop the next. */
class CompactionQueue {
  private tail: Promise<void> = Promise.resolve();

  run(below: number, compactNow: () => Promise<void>): Promise<void> {
    try {
      checkSeq(below, 'below');
    } catch (err) {
      return Promise.reject(err);
    }
    const run = this.tail.then(compactNow);
    this.tail = run.catch(noop);
    return run;
  }

  /** Settles (never rejects) once the compactions asked for so far are over. */
  get idle(): Promise<void> {
    return this.tail;
  }
}

/**
 * read()'s arguments checked, as the seqs start..end to read (nothing when start > end): from 0 reads
 * from 1, to is capped at last, and below first only the kept entries may be asked for.
 */
export function readBounds(from: number, to: number | undefined, opts: ReadOptions | undefined, first: number, last: number): { start: number; end: number } {
  checkSeq(from, 'from');
  if (to !== undefined) checkSeq(to, 'to');
  const start = Math.max(from, 1);
  if (start < first && !opts?.kept) throw new LogError('COMPACTED', `seq ${start} is compacted; the log starts at ${first}`, start);
  return { start, end: Math.min(to ?? last, last) };
}

/** Seqs are counts, and counts past 2^53 would lose their identity as doubles. */
export function checkSeq(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative safe integer, not ${n}`);
}
