// Subject alone, not the package's index (every operator: a tenth of a second of a time-travel command's start).
import { Subject } from 'rxjs/internal/Subject';
import type { Observable } from 'rxjs';
import { decodeEntry, encodeRecord, stampTime, storedRecordLength, writeStoredRecord } from './codec.js';
import { crashPoint } from './crash-point.js';
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

/** Records that go to disk together: values[i] is the encoded record of entries[i]. */
export interface Batch {
  readonly entries: LogEntry[];
  readonly values: Buffer[];
}

interface PendingBatch extends Batch {
  readonly openedAt: number;
  readonly durable: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

/** Deletes per compaction step: small enough that appends queued behind a step wait little. */
const COMPACT_STEP = 1000;

type State = 'new' | 'opening' | 'open' | 'closing' | 'closed';

const noop = () => {};

/**
 * The log's behaviour, once, for every backend: state, argument checks, seq assignment, encoding,
 * group commit, committed$ and the order of acknowledgement. A backend only stores and finds bytes,
 * through the protected _hooks (as abstract-level's public methods call _put, _batch, _iterator).
 */
export abstract class AbstractLog implements Log {
  private state: State = 'new';
  /** Why the log is broken (a batch failed to write); set once, never cleared. */
  private brokenBy: { cause: unknown } | undefined;
  private last = 0;
  private first = 1;
  /** The commit time of the newest batch: a clock that steps back does not make time run backwards. */
  private lastTime = 0;
  /** The last seq handed out; ahead of lastSeq while batches are on their way. */
  private assigned = 0;
  /** Collects appends until the batch in flight is done. */
  private queued: PendingBatch | undefined;
  private writing: PendingBatch | undefined;
  private flushScheduled = false;
  private making = false;
  private readonly compactions = new Compactions();
  private closing: Promise<void> | undefined;
  private opening: Promise<void> | undefined;
  private readonly subject = new Subject<LogEntry[]>();
  readonly committed$: Observable<LogEntry[]> = this.subject.asObservable();

  constructor(private readonly options: LogOptions = {}) {}

  get lastSeq(): number {
    return this.last;
  }

  get firstSeq(): number {
    return this.first;
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
        this.assigned = this.last;
        this.lastTime = found.lastTime ?? 0;
        this.state = 'open';
      },
      (err: unknown) => {
        this.state = 'closed';
        throw err;
      },
    );
    return this.opening;
  }

  append(make: (seq: number) => LogRecord): Appended {
    this.checkWritable();
    // A nested append would take the same seq.
    if (this.making) throw new Error('append() called from inside make()');
    const seq = this.assigned + 1;
    this.making = true;
    let record: LogRecord;
    let value: Buffer;
    try {
      record = make(seq);
      value = encodeRecord(record);
    } finally {
      this.making = false;
    }
    this.assigned = seq;
    const batch = (this.queued ??= newBatch());
    batch.entries.push({ seq, type: record.type, key: record.key, value: record.value, time: 0, writer: record.writer });
    batch.values.push(value);
    return { seq, durable: this.scheduled(batch) };
  }

  /**
   * Appends records whose values (and writers) are already stored bytes (a recording's, with their
   * recorded commit times if given), at the next seqs, in one batch; returns the first seq.
   */
  appendStored(records: readonly { type: LogRecord['type']; key: string; raw: Uint8Array; time?: number; writer?: Uint8Array }[]): Appended {
    this.checkWritable();
    const first = this.assigned + 1;
    // Every record is checked before any takes a seq: a bad one leaves the log as it was.
    for (const r of records) if (r.type !== 'put' && r.type !== 'delete') throw new TypeError(`log record type must be put or delete, not ${String(r.type)}`);
    if (records.length === 0) return { seq: first, durable: Promise.resolve() }; // no batch: it would have no last seq to acknowledge
    // One buffer for the lot, each record a view of it: not a million small ones for the GC to track.
    let total = 0;
    for (const r of records) total += storedRecordLength(r.key, r.raw, r.writer);
    const slab = Buffer.allocUnsafeSlow(total);
    const batch = (this.queued ??= newBatch());
    for (let i = 0, at = 0; i < records.length; i++) {
      const r = records[i];
      const seq = ++this.assigned;
      const end = at + storedRecordLength(r.key, r.raw, r.writer);
      writeStoredRecord(slab, at, r.type, r.key, r.raw, r.time, r.writer);
      batch.entries.push(decodeEntry(seq, slab, at, end));
      batch.values.push(slab.subarray(at, end));
      at = end;
    }
    return { seq: first, durable: this.scheduled(batch) };
  }

  /** The batch's durability, its flush scheduled if none is. */
  private scheduled(batch: PendingBatch): Promise<void> {
    // setImmediate, not a microtask: every append of this turn of the event loop (e.g. all the
    // requests parsed from one poll) joins the batch, for the price of one loop turn.
    if (!this.writing && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.scheduledFlush);
    }
    return batch.durable;
  }

  /** Refuses an append to a log not open, or broken by a failed write. */
  private checkWritable(): void {
    if (this.state !== 'open') throw new LogError('CLOSED', `the log is ${this.state === 'new' ? 'not open' : this.state}`);
    if (this.brokenBy) throw this.brokenError();
  }

  private readonly scheduledFlush = (): void => {
    this.flushScheduled = false;
    this.flush();
  };

  /** Starts writing the queued batch, unless one is in flight (it flushes again when it is done). */
  private flush(): void {
    const batch = this.queued;
    if (!batch || this.writing || this.brokenBy) return;
    this.queued = undefined;
    this.writing = batch;
    const time = (this.lastTime = Math.max(Date.now(), this.lastTime));
    for (let i = 0; i < batch.values.length; i++) {
      if (batch.entries[i].time !== 0) continue; // appended with its own time (appendStored)
      stampTime(batch.values[i], time);
      batch.entries[i].time = time;
    }
    crashPoint('before-batch-write');
    let written: Promise<void>;
    try {
      written = this._write(batch);
    } catch (err) {
      written = Promise.reject(err);
    }
    written.then(
      () => this.acknowledge(batch),
      (err: unknown) => this.breakOn(batch, err),
    );
  }

  private acknowledge(batch: PendingBatch): void {
    crashPoint('after-batch-write-before-ack');
    this.writing = undefined;
    this.last = batch.entries[batch.entries.length - 1].seq;
    // Views apply the batch before its writers hear back, so a client reads its own write.
    this.subject.next(batch.entries);
    batch.resolve();
    this.flush();
    this.options.onBatch?.(batch.entries.length, performance.now() - batch.openedAt);
  }

  /**
   * A batch that failed may or may not be on disk; a later batch acknowledged on top of it would
   * make history depend on which. So the log stops: the failed batch, everything queued behind it
   * and every later append fail with BROKEN. Reopening finds out what the disk kept.
   */
  private breakOn(batch: PendingBatch, cause: unknown): void {
    this.writing = undefined;
    this.brokenBy = { cause };
    batch.reject(this.brokenError());
    this.queued?.reject(this.brokenError());
    this.queued = undefined;
  }

  private brokenError(): LogError {
    const cause = this.brokenBy?.cause;
    const why = cause instanceof Error ? cause.message : String(cause);
    return new LogError('BROKEN', `the log is broken: a batch failed to write (${why})`, undefined, { cause });
  }

  async *read(from: number, to?: number, opts?: ReadOptions): AsyncIterable<LogEntry[]> {
    this.checkReadable();
    const { start, end } = readBounds(from, to, opts, this.first, this.last);
    if (start > end) return;
    // No await between the check above and _read, which takes its snapshot synchronously: a
    // compaction that starts later cannot pull entries out from under this read.
    yield* this._read(start, end);
  }

  async get(seq: number): Promise<LogEntry | undefined> {
    this.checkReadable();
    // Below the horizon only what a compaction kept is still stored (the backend answers undefined).
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.last) return undefined;
    const bytes = await this._get(seq);
    return bytes && decodeEntry(seq, bytes);
  }

  compact(below: number, keep: (seq: number) => boolean = () => false): Promise<void> {
    return this.compactions.run(below, () => this.compactNow(below, keep));
  }

  private async compactNow(below: number, keep: (seq: number) => boolean): Promise<void> {
    if (this.state !== 'open') throw new LogError('CLOSED', `the log is ${this.state}`);
    // Entries not yet durable are never compacted: the horizon stays within lastSeq + 1.
    const horizon = Math.min(below, this.last + 1);
    if (horizon <= this.first) return;
    await this._saveHorizon(horizon);
    this.first = horizon;
    crashPoint('compact-after-horizon');
    // The first step starts at 0, for what a crash left below an older horizon; each next step starts
    // after the last key deleted, since a seek from 0 would walk the tombstones of every earlier step
    // (quadratic in the size of the compaction). Close stops the steps; the next compaction resumes.
    // Kept entries are walked again by every compaction: a later one may no longer keep them.
    let from = 0;
    await this._settle();
    while (this.state === 'open') {
      const last = await this._deleteRange(from, horizon, COMPACT_STEP, keep);
      if (last === undefined) return this._reclaim(horizon);
      from = last + 1;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Before a compaction deletes, and after it deleted every entry below `below`: make the storage
   * drop the deleted bytes, so that what was deleted (old plaintext, ciphertext under a retired key)
   * is in none of its files. A backend whose deletes free the bytes at once has nothing to do.
   */
  protected _settle(): Promise<void> {
    return Promise.resolve();
  }

  protected _reclaim(_below: number): Promise<void> {
    return Promise.resolve();
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
    this.flush();
    while (this.writing) await this.writing.durable.catch(noop);
    await this.compactions.idle;
    this.subject.complete();
    try {
      await this._close();
    } finally {
      this.state = 'closed';
    }
  }

  private checkReadable(): void {
    if (this.state !== 'open' && this.state !== 'closing') {
      throw new LogError('CLOSED', `the log is ${this.state === 'new' ? 'not open' : this.state}`);
    }
  }

  /** Open the storage and report what is in it. */
  protected abstract _open(): Promise<Found>;
  protected abstract _close(): Promise<void>;
  /** Store the batch atomically and durably (all or nothing, synced), in one write. */
  protected abstract _write(batch: Batch): Promise<void>;
  /**
   * Entries start..end (both present), in pages of at most 1000. Must take its snapshot before it
   * returns, synchronously: entries deleted afterwards are still read.
   */
  protected abstract _read(start: number, end: number): AsyncIterable<LogEntry[]>;
  /** The stored bytes of entry seq. */
  protected abstract _get(seq: number): Promise<Buffer | undefined>;
  /** Durably record that entries below horizon are gone, before any of them is deleted. */
  protected abstract _saveHorizon(horizon: number): Promise<void>;
  /**
   * Look at up to max of the stored entries with from <= seq < below and delete those keep() does
   * not keep; returns the last seq looked at (undefined when there was none).
   */
  protected abstract _deleteRange(from: number, below: number, max: number, keep: (seq: number) => boolean): Promise<number | undefined>;
  protected abstract _saveCheckpoint(cp: Checkpoint): Promise<void>;
  protected abstract _loadCheckpoint(): Promise<SavedCheckpoint | undefined>;
}

function newBatch(): PendingBatch {
  let resolve = noop;
  let reject: (err: Error) => void = noop;
  const durable = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A caller may choose not to wait for durability; a failed batch must not then crash the process
  // as an unhandled rejection. Callers that wait still see the rejection on their own promise.
  durable.catch(noop);
  return { entries: [], values: [], openedAt: performance.now(), durable, resolve, reject };
}

/** A log's compactions, one after another: a bad horizon rejects at once, a failed one does not stop the next. */
export class Compactions {
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
