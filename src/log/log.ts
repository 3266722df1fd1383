import type { Observable } from 'rxjs';

/**
 * The log contract. Every write of orchd is one record appended here; the sequence number the log
 * gives it when it commits is the resourceVersion of what it wrote. Backends: LevelDB (embedded
 * default), in-memory (tests), etcd (one log shared by several replicas: etcd/etcd-log.ts).
 *
 * Two kinds of backend keep the one contract. A log with one writer (LevelDB, memory) hands out seqs
 * in call order as append() is called, without holes, and shares one synced batch between the
 * appends of a turn (group commit). A log shared by several writers (etcd) learns each record's seq
 * from its transaction's answer: many are in flight at once, and seqs have holes (other keys and
 * other writers take revisions too). Nothing above the log may assume seqs are dense.
 *
 * A stored value does not have to carry its resourceVersion: whoever decodes or encodes an entry
 * stamps it from the entry's seq (stamp.ts), as kube-apiserver stamps etcd's mod revision.
 */
export interface LogRecord {
  /** put: the key now holds value. delete: the key is gone; value is the object's last state. */
  type: 'put' | 'delete';
  /** Storage key, e.g. `admissionregistration.orch.io/validatingadmissionpolicies//demo`. */
  key: string;
  /**
   * The object to store. The log owns it once append() returns, and stamps its seq into it as
   * metadata.resourceVersion (stamp.ts) as soon as it knows it: at once on a log with one writer
   * (whose stored bytes then carry it), once committed on a shared log (whose stored bytes do not).
   */
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
  writer?: Author | Uint8Array;
}

/** The writer of a log entry: the authenticated user, the field manager, the verb and the subresource. */
export interface Author {
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
  /**
   * The record's seq when the log knows it as append() returns: a log with one writer numbers
   * appends in call order. undefined on a shared log, which learns it when the write commits.
   */
  readonly seq: number | undefined;
  /**
   * Resolves with the record's seq once it is durable and committed$ has handed it out (so this
   * process's views hold it before its writer hears back).
   */
  readonly durable: Promise<number>;
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

/**
 * For every object key, the seqs of its stored entries (those below firstSeq a compaction kept or has
 * not deleted yet included), kept by the log beside its entries and consistent with them after any
 * crash: a read of one object or of one kind at a version reads these instead of scanning the log.
 */
export interface VersionIndex {
  /** The key's versions, ascending by seq; a delete's seq negated. Empty when it has none. */
  versionsOf(key: string): Promise<number[]>;
  /**
   * Every key starting with prefix that holds an object at seq (its newest version at or before seq
   * is a put), with that version's seq, in key order, a page at a time. Right for seq >= firstSeq - 1.
   */
  liveAt(prefix: string, seq: number): AsyncIterable<{ key: string; seq: number }[]>;
}

export interface Log {
  /**
   * The log's version index, when it keeps one (LevelDB, memory; a LevelDB log opened without
   * building it on a folder an older orchd wrote has none). etcd keeps its own (keyIndex) and has none here.
   */
  readonly index?: VersionIndex;
  /**
   * true: several writers share this log (etcd). Seqs are learned when a write commits and have
   * holes; the log checks each record's expect itself.
   */
  readonly shared: boolean;
  /** Open the backend and recover lastSeq/firstSeq. */
  open(): Promise<void>;
  /**
   * Stops taking appends, writes and acknowledges what was already appended, completes committed$,
   * then closes the backend. Calling it again returns the same promise.
   */
  close(): Promise<void>;
  /**
   * Append one record; its seq is known when it commits (at once on a log with one writer). On a
   * log with one writer, records appended in the same tick (or while a batch is syncing) share one
   * synced batch (group commit); if a batch fails to sync the log is broken: every pending and later
   * append rejects, because acknowledging writes after a lost one would reorder history. On a shared
   * log each record is its own atomic write, many in flight: one that fails (CONFLICT: its expect no
   * longer held; UNAVAILABLE) fails alone.
   *
   * Once append() returns, the log owns the value: it is encoded at once, and committed$ may hand
   * the same object to subscribers, so the caller must not change it afterwards.
   * Throws (no seq is used up) LogError CLOSED when the log is not open, LogError BROKEN after a
   * failed batch, and TypeError for a record that cannot be encoded.
   */
  append(record: LogRecord): Appended;
  /**
   * Newest sequence number this log has applied (0 for an empty log): every committed entry up to
   * it has been handed out on committed$ (on a shared log, progress$ may move it past a hole).
   */
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
   * key, when the caller knows which key seq wrote, lets a backend that finds entries by key (etcd)
   * read it at once; the entry is the same either way.
   */
  get(seq: number, key?: string): Promise<LogEntry | undefined>;
  /**
   * Optional: the entries at seqs (ascending, each once), in that order, in pages whose items joined
   * are one per seq, undefined where get() would find none; read in one pass along a log that stores
   * entries in seq order (LevelDB), instead of a get per entry. entries-at.ts reads through it, or
   * through get() where a log has none.
   */
  entriesAt?(seqs: ArrayLike<number>): AsyncIterable<(LogEntry | undefined)[]>;
  /**
   * Optional: one entry by seq, read on the calling thread (LevelDB's getSync), as get() finds it;
   * undefined on a log that cannot read so now. A checkpoint along the log reads a part's objects
   * by it when the part is first used (store/checkpoint-format.ts), so a start from one need not read
   * every object before it is ready.
   */
  readonly entrySync?: ((seq: number) => LogEntry | undefined) | undefined;
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
   * Only on a shared log: the log has seen everything committed through this seq, though none of
   * it since the last entry was this log's (a hole: other keys took those revisions). lastSeq has
   * moved to it; a consistent read waiting for a head in the hole stops waiting here.
   */
  readonly progress$?: Observable<number>;
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
   * quorum. A read that must be consistent waits until committed$ (or progress$) has reached it.
   */
  headSeq?(): Promise<number>;
  /**
   * Only on a log shared by several writers: the key's newest record, read with a quorum (what a
   * write decided on a stale view reads before it decides again); undefined when the key has none.
   */
  current?(key: string): Promise<LogEntry | undefined>;
  /**
   * Only on a log shared by several writers: this replica fell behind and the history it had not
   * applied was compacted (another replica, or an operator, compacted etcd past it), so committed$
   * cannot bring what changed in between. The state at a newer seq comes here instead (lastSeq and
   * firstSeq have moved to it), and committed$ goes on after it.
   */
  readonly relisted$?: Observable<Relist>;
}

/**
 * CONFLICT (a record's expect no longer held: seq is the key's newest seq, 0 when it has none, and
 * found its record when it has one) and UNAVAILABLE (the shared backend could not be reached; the
 * write may or may not have happened) come only from a log shared by several writers.
 */
export type LogErrorCode = 'COMPACTED' | 'FUTURE_SEQ' | 'BROKEN' | 'CLOSED' | 'CONFLICT' | 'UNAVAILABLE' | 'LOCKED';

/** Errors of the log speak storage, not HTTP: the API edge maps codes to statuses. */
export class LogError extends Error {
  constructor(
    readonly code: LogErrorCode,
    message: string,
    readonly seq?: number,
    /** cause: what the backend reported (for BROKEN, the failed write's error; for LOCKED, the lock's). */
    options?: ErrorOptions,
    /** CONFLICT: the key's newest record, as the backend found it when it refused the write. */
    readonly found?: LogEntry,
  ) {
    super(message, options);
    this.name = 'LogError';
  }
}
