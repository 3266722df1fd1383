import type { Observable } from 'rxjs';

/**
 * The log contract. Every write of orchd is one record appended here; its sequence number is the
 * resourceVersion of what it wrote. Backends: LevelDB (embedded default), in-memory (tests), etcd
 * (one log shared by several replicas: etcd/etcd-log.ts).
 */
export interface LogRecord {
  /** put: the key now holds value. delete: the key is gone; value is the object's last state. */
  type: 'put' | 'delete';
  /** Storage key, e.g. `admissionregistration.orch.io/validatingadmissionpolicies//demo`. */
  key: string;
  /** The object as stored (already carrying its resourceVersion = seq). */
  value: unknown;
  /**
   * The seq of the key's last record that this write was decided on (0: the key has none). A backend
   * shared by several writers (etcd) writes the record only if that still holds, in the same atomic
   * step, and fails the append with CONFLICT otherwise. A backend with one writer takes it as given:
   * that writer (the store) checked it against its view synchronously with the append.
   */
  expect?: number;
  /**
   * Who wrote it, kept with the entry (and sealed with it under encryption at rest: then bytes, until
   * the encrypted log opens them). Absent for entries written before the log kept writers.
   */
  writer?: Writer | Uint8Array;
}

/** The writer of a log entry: the authenticated user, the field manager, the verb and the subresource. */
export interface Writer {
  user: string;
  verb?: string;
  subresource?: string;
  manager?: string;
}

export interface LogEntry extends LogRecord {
  seq: number;
  /**
   * The wall-clock time (ms since the epoch) at which the entry's batch was committed: every entry of
   * a batch has the same, and it never decreases along the log. Set when the batch goes to disk;
   * undefined for entries written before the log kept times (their time can only be guessed from the
   * times stamped into their objects).
   */
  time?: number;
  /**
   * The msgpack bytes of value, when the entry was read from storage (codec.ts StoredEntry): value
   * is then decoded from them on first use, and a view may keep these bytes instead of the object.
   */
  readonly raw?: Buffer;
}

export interface Appended {
  /** Assigned synchronously, in call order: a caller can stamp it into the value it writes. */
  seq: number;
  /** Settles when the batch holding the record is durable (synced) on disk. */
  durable: Promise<void>;
}

export interface ReadOptions {
  kept?: boolean;
}

/**
 * A checkpoint as the store hands it to the log: the view as of seq, in parts that come one at a
 * time (so a big view is never held twice in memory), each part a list of byte pieces stored joined.
 */
export interface Checkpoint {
  seq: number;
  parts: AsyncIterable<readonly Uint8Array[]>;
}

/**
 * A checkpoint as the log gives it back: each part, in order, as one buffer of its own, or as a part
 * of a file read a range at a time when asked (a restart then reads the parts' heads, not every object).
 */
export interface SavedCheckpoint {
  seq: number;
  parts: AsyncIterable<Buffer | PartBytes>;
}

/** A checkpoint part whose bytes are read when asked for, synchronously: read(from, to) is bytes [from, to). */
export interface PartBytes {
  readonly length: number;
  read(from: number, to: number): Buffer;
}

/** A part's whole bytes, whichever way the log gave it. */
export const partBuffer = (p: Buffer | PartBytes): Buffer => (Buffer.isBuffer(p) ? p : p.read(0, p.length));

/** A part as PartBytes, whichever way the log gave it. */
export const partBytes = (p: Buffer | PartBytes): PartBytes => (Buffer.isBuffer(p) ? { length: p.length, read: (from, to) => p.subarray(from, to) } : p);

/** What a replica that fell behind a compaction of a shared log gets instead of the history it missed. */
export interface Relist {
  /** The seq the state is at: committed$ goes on after it. */
  seq: number;
  /** Each key's newest entry at seq, in seq order; keys deleted by then are absent. */
  entries: LogEntry[];
}

export interface Log {
  /** Open the backend and recover lastSeq/firstSeq. */
  open(): Promise<void>;
  /**
   * Stops taking appends, writes and acknowledges what was already appended, completes committed$,
   * then closes the backend. Calling it again returns the same promise.
   */
  close(): Promise<void>;
  /**
   * Append one record. make() is called synchronously with the record's sequence number, so the
   * value can carry it. Records appended in the same tick (or while a batch is syncing) share one
   * synced batch (group commit). If a batch fails to sync the log is broken: every pending and later
   * append rejects, because acknowledging writes after a lost one would reorder history.
   *
   * Once make() returns, the log owns the value: it is encoded at once, and committed$ hands the
   * same object to subscribers, so the caller must not change it afterwards.
   * Throws (no seq is used up, make() is not called) LogError CLOSED when the log is not open and
   * LogError BROKEN after a failed batch; if make() or encoding throws, that error propagates and
   * the seq is given to the next append, so sequence numbers never have holes.
   */
  append(make: (seq: number) => LogRecord): Appended;
  /** Newest durable sequence number (0 for an empty log). */
  readonly lastSeq: number;
  /** Oldest sequence number still readable (the compaction horizon); lastSeq + 1 when empty. */
  readonly firstSeq: number;
  /**
   * Entries with from <= seq <= to, in order, in pages of at most 1000. to defaults to, and is capped
   * at, lastSeq when iteration starts; later appends are not seen. from < firstSeq → LogError
   * COMPACTED (seq 0 is not compacted: from 0 reads from 1). A read that started keeps its view
   * even if a compaction passes it. With `kept`, from may be below firstSeq: the entries the last
   * compaction kept there (each key's state at firstSeq - 1) come first, so a replay from 0 rebuilds
   * the current state even without a checkpoint.
   */
  read(from: number, to?: number, opts?: ReadOptions): AsyncIterable<LogEntry[]>;
  /**
   * One entry by sequence number; undefined if compacted or never written. Below firstSeq, get()
   * finds the entries the last compaction kept (and, until its deletes finish, ones it is dropping).
   */
  get(seq: number): Promise<LogEntry | undefined>;
  /**
   * Drop entries with seq < below (capped at lastSeq + 1; at or below firstSeq it does nothing),
   * except those keep() says to keep: etcd's compaction keeps each key's latest revision at the
   * horizon, so the state at firstSeq - 1 stays readable entry by entry through get(). Every
   * compaction walks all stored entries below its horizon, so an entry an earlier one kept is
   * dropped once a later keep() no longer asks for it.
   * firstSeq moves (durably) before anything is deleted, so reads below it fail cleanly; the
   * deletes then go in small batches that let appends through. Compactions run one at a time.
   */
  compact(below: number, keep?: (seq: number) => boolean): Promise<void>;
  /** Committed batches, in order, as soon as they are durable. Hot: subscribers see what comes after. */
  readonly committed$: Observable<LogEntry[]>;
  /**
   * Durably replaces the stored checkpoint once all its parts are stored (a failed save leaves the
   * previous one). cp.seq > lastSeq → LogError FUTURE_SEQ, before any part is read.
   */
  saveCheckpoint(cp: Checkpoint): Promise<void>;
  /**
   * The last saved checkpoint, which survives compaction; undefined if none. Its parts are read as
   * they are iterated (once).
   */
  loadCheckpoint(): Promise<SavedCheckpoint | undefined>;
  /**
   * Only on a log shared by several writers: the newest seq committed by any of them, read with a
   * quorum. A read that must be consistent waits until committed$ has reached it (lastSeq >= it).
   */
  headSeq?(): Promise<number>;
  /**
   * Only on a log shared by several writers: this replica fell behind and the history it had not
   * applied was compacted (another replica, or an operator, compacted etcd past it), so committed$
   * cannot bring what changed in between. The state at a newer seq comes here instead (lastSeq and
   * firstSeq have moved to it), and committed$ goes on after it.
   */
  readonly relisted$?: Observable<Relist>;
}

/**
 * CONFLICT (a record's expect no longer held), RACED (another writer took the record's seq first) and
 * UNAVAILABLE (the shared backend could not be reached; the write may or may not have happened) come
 * only from a log shared by several writers; their seq is how far the caller must catch up to
 * decide again.
 */
export type LogErrorCode = 'COMPACTED' | 'FUTURE_SEQ' | 'BROKEN' | 'CLOSED' | 'CONFLICT' | 'RACED' | 'UNAVAILABLE' | 'LOCKED';

/** Errors of the log speak storage, not HTTP: the API edge maps codes to statuses. */
export class LogError extends Error {
  constructor(
    readonly code: LogErrorCode,
    message: string,
    readonly seq?: number,
    /** cause: what the backend reported (for BROKEN, the failed write's error; for LOCKED, the lock's). */
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'LogError';
  }
}
