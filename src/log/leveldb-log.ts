import { join, resolve } from 'node:path';
import { Level } from 'level';
import { AbstractLog, readBounds, type Batch, type Found, type LogOptions } from './abstract-log.js';
import { loadCheckpointFile, saveCheckpointFile } from './checkpoint-file.js';
import { HORIZON_KEY, decodeEntry, encodeStoredRecord, readSeq, seqKey, stampTime } from './codec.js';
import { indexIsWhole, LevelVersionIndex, markIndexWhole, rebuildIndex } from './leveldb-index.js';
import { END_KEY, STALE_KEY } from './leveldb-tail-cut.js';
import { LogError, type Checkpoint, type LogEntry, type SavedCheckpoint, type VersionIndex } from './log.js';
import { indexRow, indexValue } from './version-index.js';
import { Slabs } from './slabs.js';
import { entriesInOrder } from './leveldb-ordered-read.js';

export interface LevelDbLogOptions extends LogOptions {
  /** The LevelDB directory; created if missing. */
  path: string;
  /**
   * false: batches are written without waiting for the disk (fsync). Only for a log nobody needs
   * after a crash: the replay tool's served copy in a temp folder, which it rebuilds every run.
   */
  sync?: boolean;
  /**
   * The version index (version-index.ts) of a folder that has none yet (an older orchd wrote it) is
   * built when the log opens, unless this is false: a reader of a snapshot, which answers without one.
   */
  buildIndex?: boolean;
}

/** An entry of LevelDbLog.import: its stored bytes at its own seq. */
export interface ImportedEntry {
  seq: number;
  type: 'put' | 'delete';
  key: string;
  raw: Uint8Array;
  time?: number;
  /** Who wrote it, as stored bytes (its msgpack, or sealed under encryption at rest). */
  writer?: Uint8Array;
}

/** Entries only: every meta key (0xff…) sorts after the largest seq key. */
const ENTRY_RANGE = { gte: seqKey(0), lte: seqKey(Number.MAX_SAFE_INTEGER) };
const PAGE = 1000;
/**
 * Replaying 1M 1 KB entries here, nextv(1000) with 1 MiB of read-ahead ran at ~278k entries/s,
 * `for await` with the 16 KiB default at ~110k/s (research/baseline.md section 2).
 */
const READ_AHEAD_BYTES = 1 << 20;
/**
 * LevelDB's write buffer while importing (its default is 4 MiB). An import writes as fast as LevelDB
 * takes it: with 4 MiB memtables, a million-entry fork flushed ~330 level-0 tables, and LevelDB held
 * the writes back whenever level 0 had 8 or more waiting for a compaction (fork 180 s and 56 CPU-s
 * against 108 s and 38 CPU-s with 64 MiB, loaded; RESULTS section 53). Only the import's own open: a
 * server's log keeps the default.
 */
const IMPORT_WRITE_BUFFER = 64 << 20;

/**
 * The checkpoint lives in a file beside LevelDB's own, not under a key: LevelDB writes one value at a
 * time, and a checkpoint of a big view (hundreds of MB) written under a key held every append behind
 * it for a second. The file is replaced atomically (write, fsync, rename, fsync the folder).
 */
export const checkpointFile = (path: string): string => join(path, 'orchd-checkpoint');

/**
 * The embedded log: one LevelDB, entries keyed by big-endian seq (codec.ts). Each group-commit batch
 * is one chained batch written with sync, which LevelDB applies atomically: after a crash a batch is
 * wholly there or wholly absent, and batches are written one at a time, so entries stay contiguous.
 * (Chained, not an array batch with an options object: abstract-level copies the options into every
 * operation of an array batch, which cost up to 2x the CPU per entry in research/baseline.md.)
 */
/**
 * The log folders this process has open (see _open): one set for the process, even where this
 * module is loaded twice (a test runner's module graph beside a built copy).
 */
const OPEN_HERE: Set<string> = ((globalThis as Record<symbol, Set<string> | undefined>)[Symbol.for('orchd.leveldb-log.open')] ??= new Set());

export class LevelDbLog extends AbstractLog {
  readonly path: string;
  private db!: Level<Buffer, Buffer>;
  private readonly sync: boolean;
  /** The folder this log holds open, as OPEN_HERE has it. */
  private held: string | undefined;
  private readonly buildIndex: boolean;
  private versionIndex: LevelVersionIndex | undefined;
  /** Whether the log keeps its end under END_KEY (a fork that shares a source's tables), moved on with each batch. */
  private ended = false;
  /** Up to this seq, past the end, the tables hold a source's entries and index rows (leveldb-tail-cut.ts). */
  private staleTo = 0;

  constructor(options: LevelDbLogOptions) {
    super(options);
    this.path = options.path;
    this.sync = options.sync ?? true;
    this.buildIndex = options.buildIndex ?? true;
  }

  get index(): VersionIndex | undefined {
    return this.versionIndex;
  }

  protected async _open(): Promise<Found> {
    // LevelDB's lock is a POSIX record lock, which is the process's: a second open of the folder in
    // this process would be refused, but only after rotating its info LOG and opening and closing its
    // LOCK file, and that close drops the lock the first open holds, so another process could then
    // open the log beside it. So no Level is made for a folder open here (a Level opens itself once made).
    const where = resolve(this.path);
    if (OPEN_HERE.has(where)) throw new LogError('LOCKED', `the log is open in this process already: ${join(this.path, 'LOCK')}`);
    this.db = new Level<Buffer, Buffer>(this.path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    try {
      await this.db.open();
      OPEN_HERE.add(where);
      this.held = where;
    } catch (err) {
      // LevelDB holds a lock file while open: another process (another orchd) has this log.
      const cause = (err as { cause?: { code?: string } }).cause;
      if (cause?.code === 'LEVEL_LOCKED') throw new LogError('LOCKED', `the log is locked by another process: ${join(this.path, 'LOCK')}`, undefined, { cause });
      throw err;
    }
    const [first] = await this.db.keys({ ...ENTRY_RANGE, limit: 1 }).all();
    // A fork's log ends where its end key says (leveldb-tail-cut.ts): past it lie entries of the
    // source it shares tables with, which are not its own.
    const end = await this.db.get(END_KEY);
    this.ended = end !== undefined;
    const stale = await this.db.get(STALE_KEY);
    this.staleTo = stale ? readSeq(stale) : 0;
    const [last] = end ? (readSeq(end) > 0 ? [end] : []) : await this.db.keys({ ...ENTRY_RANGE, reverse: true, limit: 1 }).all();
    const horizon = await this.db.get(HORIZON_KEY);
    const lastBytes = last && (await this.db.get(last));
    const whole = await indexIsWhole(this.db, last && lastBytes && { seq: readSeq(last), bytes: lastBytes });
    if (!whole && this.buildIndex) await rebuildIndex(this.db, end ? readSeq(end) : last && readSeq(last));
    if (whole || this.buildIndex) this.versionIndex = new LevelVersionIndex(this.db, this.ended ? () => this.lastSeq : undefined);
    return {
      first: first && readSeq(first),
      last: last && readSeq(last),
      horizon: horizon && readSeq(horizon),
      lastTime: lastBytes && decodeEntry(readSeq(last), lastBytes).time,
    };
  }

  protected async _close(): Promise<void> {
    await this.db?.close();
    if (this.held) OPEN_HERE.delete(this.held);
    this.held = undefined;
  }

  protected _write(batch: Batch): Promise<void> {
    const first = batch.entries[0];
    return first !== undefined && first.seq <= this.staleTo ? this.writeOverStale(batch) : this.writeBatch(batch, []);
  }

  private writeBatch(batch: Batch, staleRows: readonly Buffer[]): Promise<void> {
    const { entries, values } = batch;
    const chain = this.db.batch();
    // Before the new rows: a stale row of the same key and seq is then put again.
    for (const row of staleRows) chain.del(row);
    // The index's rows go in the entries' own batch: after a crash both are there or neither is.
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      chain.put(seqKey(e.seq), values[i]);
      chain.put(indexRow(e.key, e.seq), indexValue(e.type));
    }
    if (this.ended && entries.length > 0) chain.put(END_KEY, seqKey(entries[entries.length - 1].seq));
    return chain.write({ sync: this.sync });
  }

  /**
   * A fork's batch over seqs its source's entries still hold past its end: their index rows are
   * deleted in the batch that replaces the entries, so no row names a seq another key now holds.
   */
  private async writeOverStale(batch: Batch): Promise<void> {
    const over = batch.entries.filter((e) => e.seq <= this.staleTo);
    const old = await Promise.all(over.map((e) => this.db.get(seqKey(e.seq))));
    const rows: Buffer[] = [];
    old.forEach((bytes, i) => bytes && rows.push(indexRow(decodeEntry(over[i].seq, bytes).key, over[i].seq)));
    return this.writeBatch(batch, rows);
  }

  protected _read(start: number, end: number): AsyncIterable<LogEntry[]> {
    // The native iterator (and its implicit snapshot) is made here, synchronously.
    const pages = readAhead(this.db.iterator({ gte: seqKey(start), lte: seqKey(end), highWaterMarkBytes: READ_AHEAD_BYTES }));
    const slabs = new Slabs();
    return (async function* decoded() {
      for await (const page of pages) yield decodePage(page, slabs);
    })();
  }

  /**
   * The stored records of entries from..to (codec.ts's layout) as LevelDB hands them over, a page of
   * up to 1000 at a time, neither copied nor decoded: what a recording holds as it is (the time-travel
   * export), where read() would copy each into a slab and parse its head. Only entries from firstSeq.
   */
  async *storedRecords(from: number, to?: number): AsyncIterable<{ seqs: number[]; records: Buffer[] }> {
    const { start, end } = readBounds(from, to, undefined, this.firstSeq, this.lastSeq);
    if (start > end) return;
    for await (const page of readAhead(this.db.iterator({ gte: seqKey(start), lte: seqKey(end), highWaterMarkBytes: READ_AHEAD_BYTES }))) {
      const seqs = new Array<number>(page.length);
      const records = new Array<Buffer>(page.length);
      for (let i = 0; i < page.length; i++) {
        seqs[i] = readSeq(page[i][0]);
        records[i] = page[i][1];
      }
      yield { seqs, records };
    }
  }

  /**
   * The entries at seqs (ascending, each once), in order, in one pass along the log
   * (leveldb-ordered-read.ts); undefined where it holds none (compacted, never written, past its end).
   */
  async *entriesAt(seqs: ArrayLike<number>): AsyncIterable<(LogEntry | undefined)[]> {
    // Past the end, a fork's shared tables hold its source's entries: not this log's.
    let from = 0;
    let to = seqs.length;
    while (from < to && !(seqs[from] >= 1)) from++;
    while (to > from && seqs[to - 1] > this.lastSeq) to--;
    if (from > 0) yield new Array<undefined>(from).fill(undefined);
    if (to > from) yield* entriesInOrder(this.db, from === 0 && to === seqs.length ? seqs : Array.prototype.slice.call(seqs, from, to));
    if (to < seqs.length) yield new Array<undefined>(seqs.length - to).fill(undefined);
  }

  /** get(), on the calling thread: one seek through LevelDB's tables, tens of µs. */
  readonly entrySync = (seq: number): LogEntry | undefined => {
    this.checkReadable();
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.lastSeq) return undefined;
    const bytes = this.db.getSync(seqKey(seq));
    return bytes && decodeEntry(seq, bytes);
  };

  protected _getBytes(seq: number): Promise<Buffer | undefined> {
    return this.db.get(seqKey(seq));
  }

  protected _saveHorizon(horizon: number): Promise<void> {
    return this.db.put(HORIZON_KEY, seqKey(horizon), { sync: true });
  }

  protected async _deleteRange(from: number, below: number, max: number, keep: (seq: number) => boolean): Promise<number | undefined> {
    // Values too: an entry's index row is named by its object key, which only its record holds.
    const page = await this.db.iterator({ gte: seqKey(from), lt: seqKey(below), limit: max }).all();
    if (page.length === 0) return undefined;
    const chain = this.db.batch();
    for (const [k, v] of page) {
      const seq = readSeq(k);
      if (keep(seq)) continue;
      chain.del(k);
      chain.del(indexRow(decodeEntry(seq, v).key, seq));
    }
    // Not synced: the horizon already hides these entries, and a delete lost in a crash is redone
    // by the next compaction, which starts from seq 0.
    await chain.write();
    return readSeq(page[page.length - 1][0]);
  }

  /**
   * LevelDB deletes by writing tombstones: the deleted values stay in its table and write-ahead files
   * until a compaction of their range rewrites them, and a manual compaction only merges levels that
   * held the range before it flushed its memtable. So the values are flushed to a table first
   * (_settle: any compactRange flushes), the tombstones are written, and then the range is compacted
   * (_reclaim): tombstones meet values, both are dropped, and the old files are removed.
   */
  protected override _settle(): Promise<void> {
    return this.compactRange(seqKey(0), seqKey(0));
  }

  protected override _reclaim(below: number): Promise<void> {
    return this.compactRange(seqKey(0), seqKey(below));
  }

  private compactRange(start: Buffer, end: Buffer): Promise<void> {
    // `level` resolves to classic-level on Node, whose compactRange its browser-shared types leave out.
    return (this.db as unknown as { compactRange(start: Buffer, end: Buffer): Promise<void> }).compactRange(start, end);
  }

  protected _saveCheckpoint(cp: Checkpoint): Promise<void> {
    return saveCheckpointFile(checkpointFile(this.path), cp);
  }

  protected _loadCheckpoint(): Promise<SavedCheckpoint | undefined> {
    return loadCheckpointFile(checkpointFile(this.path));
  }

  /**
   * Writes entries into the empty log folder at path, not open, at their own seqs, then the
   * horizon: a log opened on it reads the entries as the state a compaction kept below the horizon
   * (the key index of a restart finds them), and its next append takes seq horizon. How a state read
   * elsewhere (a recording's snapshot, another folder's state at a version) becomes a log that goes
   * on from it. Each entry's value is its stored msgpack bytes; time, when given, is its commit time.
   *
   * history, when given, is the log's entries from the horizon on (a fork: the recording's entries
   * after its snapshot), each at the next seq with no gap, kept with their commit times: the log
   * opened on it reads them as its own history and appends after the last. Returns the last seq.
   */
  static async import(
    path: string,
    pages: AsyncIterable<readonly ImportedEntry[]> | Iterable<readonly ImportedEntry[]>,
    horizon: number,
    history?: AsyncIterable<readonly ImportedEntry[]>,
  ): Promise<number> {
    const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer', writeBufferSize: IMPORT_WRITE_BUFFER });
    await db.open();
    let last = horizon - 1;
    try {
      const [held] = await db.keys({ ...ENTRY_RANGE, limit: 1 }).all();
      if (held) throw new Error(`import into ${path}: the log already holds entries (entry ${readSeq(held)})`);
      await writePages(db, pages, (e) => {
        if (e.seq >= horizon) throw new Error(`import into ${path}: entry ${e.seq} (${e.key}) is not below the horizon ${horizon}`);
      });
      if (history) {
        await writePages(db, history, (e) => {
          if (e.seq !== last + 1) throw new Error(`import into ${path}: history entry ${e.seq} (${e.key}) is not the next after ${last}`);
          last = e.seq;
        });
      }
      await markIndexWhole(db);
      // Synced: the writes before it reach the disk with it (one write-ahead log, written in order).
      await db.put(HORIZON_KEY, seqKey(horizon), { sync: true });
    } finally {
      await db.close();
    }
    return last;
  }
}

/**
 * An iterator's pages of up to PAGE entries, the next read (on LevelDB's thread) while the caller
 * works on this one: a replay then no longer waits for the disk between pages. One read is in flight
 * at a time, as iterators allow; the iterator is closed however the pages end.
 */
async function* readAhead(it: { nextv(n: number): Promise<[Buffer, Buffer][]>; close(): Promise<void> }): AsyncIterable<[Buffer, Buffer][]> {
  let next: Promise<[Buffer, Buffer][]> | undefined = it.nextv(PAGE);
  try {
    for (;;) {
      const page: [Buffer, Buffer][] = await next;
      next = undefined;
      if (page.length === 0) return;
      next = it.nextv(PAGE);
      yield page;
    }
  } finally {
    await next?.catch(() => undefined);
    await it.close();
  }
}

/**
 * Each page of entries as one unsynced batch, written on LevelDB's thread while the next page is read
 * and encoded (one batch in flight, in order); an entry check() refuses leaves its page unwritten.
 */
async function writePages(db: Level<Buffer, Buffer>, pages: AsyncIterable<readonly ImportedEntry[]> | Iterable<readonly ImportedEntry[]>, check: (e: ImportedEntry) => void): Promise<void> {
  let writing: Promise<void> | undefined;
  try {
    for await (const page of pages) {
      const chain = db.batch();
      for (const e of page) {
        check(e);
        const record = encodeStoredRecord(e.type, e.key, e.raw, e.writer);
        if (e.time !== undefined) stampTime(record, e.time);
        chain.put(seqKey(e.seq), record);
        chain.put(indexRow(e.key, e.seq), indexValue(e.type));
      }
      await writing;
      writing = chain.write();
    }
    await writing;
  } finally {
    await writing?.catch(() => undefined);
  }
}

/**
 * A page's entries, their bytes copied into one buffer. LevelDB hands each value over as a buffer of
 * its own (its own memory block, tracked and freed by the garbage collector one by one); a replay
 * keeps a million of them as the views' objects, and that bookkeeping cost more than the reading.
 * Views of one block per page cost a fraction of it. A kept object holds its page's block alive
 * (store/view.ts releaseBuffers gives the objects left on a mostly dead page bytes of their own).
 */
function decodePage(page: [Buffer, Buffer][], slabs: Slabs): LogEntry[] {
  let total = 0;
  for (const [, v] of page) total += v.length;
  const { slab, at: start } = slabs.take(total);
  const out: LogEntry[] = new Array(page.length);
  let at = start;
  for (let i = 0; i < page.length; i++) {
    const [k, v] = page[i];
    v.copy(slab, at);
    out[i] = decodeEntry(readSeq(k), slab, at, at + v.length);
    at += v.length;
  }
  return out;
}
