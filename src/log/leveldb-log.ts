import { open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';
import { AbstractLog, type Batch, type Found, type LogOptions } from './abstract-log.js';
import { CHECKPOINT_HEAD_BYTES, HORIZON_KEY, PART_LENGTH_BYTES, checkpointHead, decodeEntry, framePart, readCheckpointHead, readSeq, seqKey } from './codec.js';
import type { Checkpoint, LogEntry, SavedCheckpoint } from './log.js';

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
    await this.db.open();
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
          yield decodePage(page);
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
    return head && { seq: head.seq, parts: readParts(file, head) };
  }
}

interface Head {
  seq: number;
  /** The first part's length; undefined when the checkpoint has no parts. */
  first: number | undefined;
}

async function readHead(file: string): Promise<Head | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const buf = Buffer.alloc(CHECKPOINT_HEAD_BYTES + PART_LENGTH_BYTES);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const seq = readCheckpointHead(buf.subarray(0, bytesRead));
    if (seq === undefined) return undefined;
    if (bytesRead === CHECKPOINT_HEAD_BYTES) return { seq, first: undefined };
    if (bytesRead < buf.length) throw new Error(`checkpoint file ${file} ends inside the length of its first part`);
    return { seq, first: buf.readUInt32BE(CHECKPOINT_HEAD_BYTES) };
  } finally {
    await fh.close();
  }
}

/**
 * The parts of a checkpoint file, each read into a buffer of its own (the objects loaded from it
 * keep views of it) together with the next part's length, while the caller works on the part before.
 * The file is opened when iteration starts and closed when it ends, or when the caller stops early.
 */
async function* readParts(file: string, head: Head): AsyncIterable<Buffer> {
  const fh = await open(file, 'r');
  let at = CHECKPOINT_HEAD_BYTES + PART_LENGTH_BYTES;
  const readPart = async (length: number): Promise<{ part: Buffer; next: number | undefined }> => {
    const buf = Buffer.allocUnsafeSlow(length + PART_LENGTH_BYTES);
    const { bytesRead } = await fh.read(buf, 0, buf.length, at);
    if (bytesRead !== length && bytesRead !== buf.length) throw new Error(`checkpoint file ${file} ends inside a part (at byte ${at + bytesRead})`);
    at += bytesRead;
    return { part: buf.subarray(0, length), next: bytesRead === buf.length ? buf.readUInt32BE(length) : undefined };
  };
  let pending: Promise<{ part: Buffer; next: number | undefined }> | undefined;
  try {
    // Replaced since its head was read (only a running store saves, and it is the one loading).
    if (readCheckpointHead((await fh.read(Buffer.alloc(CHECKPOINT_HEAD_BYTES), 0, CHECKPOINT_HEAD_BYTES, 0)).buffer) !== head.seq) {
      throw new Error(`checkpoint file ${file} changed while it was read`);
    }
    pending = head.first === undefined ? undefined : readPart(head.first);
    while (pending) {
      const { part, next } = await pending;
      pending = next === undefined ? undefined : readPart(next);
      yield part;
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
function decodePage(page: [Buffer, Buffer][]): LogEntry[] {
  let total = 0;
  for (const [, v] of page) total += v.length;
  const slab = Buffer.allocUnsafeSlow(total);
  const out: LogEntry[] = new Array(page.length);
  let at = 0;
  for (let i = 0; i < page.length; i++) {
    const [k, v] = page[i];
    v.copy(slab, at);
    out[i] = decodeEntry(readSeq(k), slab, at, at + v.length);
    at += v.length;
  }
  return out;
}
