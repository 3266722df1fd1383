import { open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';
import { AbstractLog, type Batch, type Found, type LogOptions } from './abstract-log.js';
import { CHECKPOINT_HEAD_BYTES, HORIZON_KEY, PART_LENGTH_BYTES, checkpointHead, decodeEntry, framePart, readCheckpointHead, readSeq, seqKey } from './codec.js';
import { LogError, type Checkpoint, type LogEntry, type SavedCheckpoint } from './log.js';

export interface LevelDbLogOptions extends LogOptions {
  /** The LevelDB directory; created if missing. */
  path: string;
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
export class LevelDbLog extends AbstractLog {
  readonly path: string;
  private readonly db: Level<Buffer, Buffer>;

  constructor(options: LevelDbLogOptions) {
    super(options);
    this.path = options.path;
    this.db = new Level<Buffer, Buffer>(options.path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  }

  protected async _open(): Promise<Found> {
    try {
      await this.db.open();
    } catch (err) {
      // LevelDB holds a lock file while open: another process (another orchd) has this log.
      const cause = (err as { cause?: { code?: string } }).cause;
      if (cause?.code === 'LEVEL_LOCKED') throw new LogError('LOCKED', `the log is locked by another process: ${join(this.path, 'LOCK')}`, undefined, { cause });
      throw err;
    }
    const [first] = await this.db.keys({ ...ENTRY_RANGE, limit: 1 }).all();
    const [last] = await this.db.keys({ ...ENTRY_RANGE, reverse: true, limit: 1 }).all();
    const horizon = await this.db.get(HORIZON_KEY);
    const lastBytes = last && (await this.db.get(last));
    return {
      first: first && readSeq(first),
      last: last && readSeq(last),
      horizon: horizon && readSeq(horizon),
      lastTime: lastBytes && decodeEntry(readSeq(last), lastBytes).time,
    };
  }

  protected _close(): Promise<void> {
    return this.db.close();
  }

  protected _write(batch: Batch): Promise<void> {
    const chain = this.db.batch();
    const { entries, values } = batch;
    for (let i = 0; i < entries.length; i++) chain.put(seqKey(entries[i].seq), values[i]);
    return chain.write({ sync: true });
  }

  protected _read(start: number, end: number): AsyncIterable<LogEntry[]> {
    // The native iterator (and its implicit snapshot) is made here, synchronously.
    const it = this.db.iterator({ gte: seqKey(start), lte: seqKey(end), highWaterMarkBytes: READ_AHEAD_BYTES });
    const slabs = new Slabs();
    return (async function* pages() {
      // The next page is read (on LevelDB's thread) while the caller folds this one: a replay then
      // no longer waits for the disk between pages. One read is in flight at a time, as iterators allow.
      let next: Promise<[Buffer, Buffer][]> | undefined = it.nextv(PAGE);
      try {
        for (;;) {
          const page: [Buffer, Buffer][] = await next;
          next = undefined;
          if (page.length === 0) return;
          next = it.nextv(PAGE);
          yield decodePage(page, slabs);
        }
      } finally {
        await next?.catch(() => undefined);
        await it.close();
      }
    })();
  }

  protected _get(seq: number): Promise<Buffer | undefined> {
    return this.db.get(seqKey(seq));
  }

  protected _saveHorizon(horizon: number): Promise<void> {
    return this.db.put(HORIZON_KEY, seqKey(horizon), { sync: true });
  }

  protected async _deleteRange(from: number, below: number, max: number, keep: (seq: number) => boolean): Promise<number | undefined> {
    const keys = await this.db.keys({ gte: seqKey(from), lt: seqKey(below), limit: max }).all();
    if (keys.length === 0) return undefined;
    const chain = this.db.batch();
    for (const k of keys) if (!keep(readSeq(k))) chain.del(k);
    // Not synced: the horizon already hides these entries, and a delete lost in a crash is redone
    // by the next compaction, which starts from seq 0.
    await chain.write();
    return readSeq(keys[keys.length - 1]);
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

  protected async _saveCheckpoint(cp: Checkpoint): Promise<void> {
    const file = checkpointFile(this.path);
    const tmp = `${file}.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.write(checkpointHead(cp.seq));
      // Each part straight from the store's pieces (the stored objects' own bytes): nothing is joined.
      for await (const pieces of cp.parts) await fh.writev(framePart(pieces));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
    const dir = await open(this.path, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  protected async _loadCheckpoint(): Promise<SavedCheckpoint | undefined> {
    const file = checkpointFile(this.path);
    const head = await readHead(file);
    return head && { seq: head.seq, parts: readParts(file, head.seq) };
  }
}

async function readHead(file: string): Promise<{ seq: number } | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const buf = Buffer.alloc(CHECKPOINT_HEAD_BYTES);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const seq = readCheckpointHead(buf.subarray(0, bytesRead));
    return seq === undefined ? undefined : { seq };
  } finally {
    await fh.close();
  }
}

/** A checkpoint file is read in steps of this many bytes, into buffers of up to SEGMENT bytes. */
const READ_STEP = 64 << 20;
/** Buffers stay far below Node's 4 GiB limit: a checkpoint of several million objects spans a few. */
const SEGMENT = 1 << 30;

/**
 * The parts of a checkpoint file as views of few large buffers (one per GiB), read in large steps
 * with the next step in flight while the caller works on the parts already read. Not one buffer per
 * part: a thousand separately allocated megabytes of memory outside the heap each pushed V8 towards
 * another full collection while the view was being built (a third of a restart's time was the
 * garbage collector). The objects loaded from the parts keep their buffer alive; once most of them
 * are replaced, the rest get bytes of their own (store/view.ts releaseBuffers). The file is opened
 * when iteration starts and closed when it ends, or when the caller stops early. (segment and
 * readStep are parameters so that a test can cross buffers with a small file.)
 */
export async function* readParts(file: string, seq: number, segment = SEGMENT, readStep = READ_STEP): AsyncIterable<Buffer> {
  const fh = await open(file, 'r');
  let pending: Promise<number> | undefined;
  try {
    // Replaced since its head was read (only a running store saves, and it is the one loading).
    if (readCheckpointHead((await fh.read(Buffer.alloc(CHECKPOINT_HEAD_BYTES), 0, CHECKPOINT_HEAD_BYTES, 0)).buffer) !== seq) {
      throw new Error(`checkpoint file ${file} changed while it was read`);
    }
    const total = (await fh.stat()).size - CHECKPOINT_HEAD_BYTES;
    /** The buffer, where it starts in the file (after the head), how much of it is read, and the next part in it. */
    let buf = Buffer.allocUnsafeSlow(Math.max(0, Math.min(segment, total)));
    let base = 0;
    let filled = 0;
    let at = 0;
    const cut = () => new Error(`checkpoint file ${file} ends inside a part (at byte ${CHECKPOINT_HEAD_BYTES + base + at})`);
    const step = (): Promise<number> => {
      const from = filled;
      return fh.read(buf, from, Math.min(readStep, buf.length - from), CHECKPOINT_HEAD_BYTES + base + from).then((r) => r.bytesRead);
    };
    const readOn = async (): Promise<void> => {
      const read = pending && (await pending);
      if (!read) throw cut();
      filled += read;
      pending = filled < buf.length ? step() : undefined;
    };
    /** Waits until buf[at, at + n) is read; a part running past the buffer moves, with what was read of it, to the next. */
    const readable = async (n: number): Promise<void> => {
      if (base + at + n > total) throw cut();
      if (at + n > buf.length) {
        while (pending) await readOn();
        const next = Buffer.allocUnsafeSlow(Math.max(n, Math.min(segment, total - base - at)));
        filled = buf.copy(next, 0, at, filled);
        base += at;
        at = 0;
        buf = next;
        pending = filled < buf.length ? step() : undefined;
      }
      while (filled < at + n) await readOn();
    };
    pending = buf.length > 0 ? step() : undefined;
    while (base + at < total) {
      await readable(PART_LENGTH_BYTES);
      const length = buf.readUInt32BE(at);
      await readable(PART_LENGTH_BYTES + length);
      yield buf.subarray(at + PART_LENGTH_BYTES, at + PART_LENGTH_BYTES + length);
      at += PART_LENGTH_BYTES + length;
    }
  } finally {
    await pending?.catch(() => undefined);
    await fh.close();
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

/** The largest buffer one read copies its pages into. */
const SLAB_MAX = 64 << 20;

/**
 * The buffers one read copies its pages into, each twice the size of the one before, up to
 * SLAB_MAX: a short read (a watch catching up) allocates about what it reads, a replay of a million
 * entries a few dozen buffers instead of one per page (a thousand separately allocated megabytes
 * outside the heap each pushed V8 towards another full collection).
 */
class Slabs {
  private slab: Buffer | undefined;
  private used = 0;

  /** Room for n bytes: a buffer and where in it they go. */
  take(n: number): { slab: Buffer; at: number } {
    if (!this.slab || this.used + n > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(Math.max(n, Math.min(SLAB_MAX, 2 * (this.slab?.length ?? 0))));
      this.used = 0;
    }
    const at = this.used;
    this.used += n;
    return { slab: this.slab, at };
  }
}
