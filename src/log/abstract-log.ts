import { decodeEntry, encodeRecord, stampTime } from './codec.js';
import { crashPoint } from './crash-point.js';
import { LogSkeleton, noop, type Found, type LogOptions } from './log-skeleton.js';
import type { Appended, LogEntry, LogRecord } from './log.js';
import { stampVersion } from './stamp.js';

export { checkSeq, readBounds, type Found, type LogOptions } from './log-skeleton.js';

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

/**
 * A log with one writer (this process), for every backend that stores bytes (LevelDB, memory): seq
 * assignment in call order, encoding, group commit, and the order of acknowledgement, on the shared
 * skeleton (log-skeleton.ts). A backend only stores and finds bytes, through the protected _hooks.
 */
export abstract class AbstractLog extends LogSkeleton {
  /** One writer: this process numbers the appends itself. */
  readonly shared = false;
  /** The commit time of the newest batch: a clock that steps back does not make time run backwards. */
  private lastTime = 0;
  /** The last seq handed out; ahead of lastSeq while batches are on their way. */
  private assigned = 0;
  /** Collects appends until the batch in flight is done. */
  private queued: PendingBatch | undefined;
  private writing: PendingBatch | undefined;
  private flushScheduled = false;

  constructor(private readonly options: LogOptions = {}) {
    super();
  }

  protected override _opened(found: Found): void {
    this.assigned = this.last;
    this.lastTime = found.lastTime ?? 0;
  }

  /**
   * The seq is the next one, known at once: it is stamped into the value before it is encoded, so
   * LevelDB's values keep carrying their resourceVersion. Decided so, rather than storing values
   * without it as etcd does: the bytes on disk stay the format every earlier orchd wrote and the
   * tools read (no migration), and it costs nothing here, where the seq is known before the write.
   * Readers stamp from the seq all the same (stamp.ts), so both kinds of log read alike.
   */
  append(record: LogRecord): Appended {
    this.checkWritable();
    const seq = this.assigned + 1;
    stampVersion(record.value, seq);
    const value = encodeRecord(record);
    this.assigned = seq;
    const batch = (this.queued ??= newBatch());
    batch.entries.push({ seq, type: record.type, key: record.key, value: record.value, time: 0, writer: record.writer });
    batch.values.push(value);
    const durable = this.scheduled(batch).then(() => seq);
    // Unhandled otherwise when the caller does not wait; a caller that waits still sees the rejection.
    durable.catch(noop);
    return { seq, durable };
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
    this.breakWith(cause, 'a batch failed to write');
    batch.reject(this.brokenError());
    this.queued?.reject(this.brokenError());
    this.queued = undefined;
  }

  protected async _drain(): Promise<void> {
    this.flush();
    while (this.writing) await this.writing.durable.catch(noop);
  }

  protected async _get(seq: number): Promise<LogEntry | undefined> {
    const bytes = await this._getBytes(seq);
    return bytes && decodeEntry(seq, bytes);
  }

  protected async _compact(horizon: number, keep: (seq: number) => boolean, moved: () => void): Promise<void> {
    await this._saveHorizon(horizon);
    moved();
    crashPoint('compact-after-horizon');
    // The first step starts at 0, for what a crash left below an older horizon; each next step starts
    // after the last key deleted, since a seek from 0 would walk the tombstones of every earlier step
    // (quadratic in the size of the compaction). Close stops the steps; the next compaction resumes.
    // Kept entries are walked again by every compaction: a later one may no longer keep them.
    let from = 0;
    await this._settle();
    while (this.isOpen) {
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

  /** Store the batch atomically and durably (all or nothing, synced), in one write. */
  protected abstract _write(batch: Batch): Promise<void>;
  /** The stored bytes of entry seq. */
  protected abstract _getBytes(seq: number): Promise<Buffer | undefined>;
  /** Durably record that entries below horizon are gone, before any of them is deleted. */
  protected abstract _saveHorizon(horizon: number): Promise<void>;
  /**
   * Look at up to max of the stored entries with from <= seq < below and delete those keep() does
   * not keep; returns the last seq looked at (undefined when there was none).
   */
  protected abstract _deleteRange(from: number, below: number, max: number, keep: (seq: number) => boolean): Promise<number | undefined>;
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
