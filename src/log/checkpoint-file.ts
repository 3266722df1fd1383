import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { basename, dirname, join } from 'node:path';
import { CHECKPOINT_HEAD_BYTES, PART_LENGTH_BYTES, checkpointHead, framePart, readCheckpointHead } from './codec.js';
import { crashPoint } from './crash-point.js';
import type { Checkpoint, PartBytes, SavedCheckpoint } from './log.js';

/*
 * A checkpoint in a file of its own (codec.ts lays out its bytes), for the backends that keep
 * checkpoints on the local disk: LevelDB beside its own files, etcd in each replica's folder.
 *
 * Checkpoints along the log: each save writes the whole checkpoint to `file` (the newest: what a
 * restart loads) and, beside it, an index-only copy `file.<seq>` that keeps of each part only its
 * index (the first `indexPieces` pieces the store marks: its keys and their revisions, no object
 * bytes). The index copies stay after the next save replaces `file`, the newest ALONG_KEPT of them;
 * a reader takes the objects an index copy names from the log by sequence number. The log keeps
 * the bytes opaque: which pieces are the index is the store's to say (store/checkpoint-format.ts).
 */

/** How many index-only checkpoints are kept along the log (with the store's default of one every 100k entries: the last 1.6M entries). */
export const ALONG_KEPT = 16;

/**
 * A checkpoint whose parts each begin with an index: its first indexPieces pieces, enough to say
 * which keys the part holds and at which revisions (the store's part head).
 */
export interface IndexedCheckpoint extends Checkpoint {
  indexPieces: number;
}

const hasIndex = (cp: Checkpoint): cp is IndexedCheckpoint => typeof (cp as Partial<IndexedCheckpoint>).indexPieces === 'number';

/** The index-only copy of the checkpoint at seq saved beside file (zero-padded, so names sort as seqs do). */
export const alongFile = (file: string, seq: number): string => `${file}.${String(seq).padStart(16, '0')}`;

/** One checkpoint beside a log: the whole newest one, or an index-only copy along the log. */
export interface CheckpointAt {
  seq: number;
  file: string;
  indexOnly: boolean;
}

/**
 * Every checkpoint saved beside file (its seq read from its head, not trusted from its name), newest
 * first; at the same seq the whole one comes before its index copy. Files that are no checkpoint
 * this code wrote (another format, a save cut short: .tmp) are left out.
 */
export function checkpointsBeside(file: string): CheckpointAt[] {
  const dir = dirname(file);
  const name = basename(file);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: CheckpointAt[] = [];
  for (const n of names) {
    const along = n.startsWith(`${name}.`) && /^\d{16}$/.test(n.slice(name.length + 1));
    if (n !== name && !along) continue;
    const seq = headSeq(join(dir, n));
    if (seq !== undefined) out.push({ seq, file: join(dir, n), indexOnly: along });
  }
  return out.sort((a, b) => b.seq - a.seq || Number(a.indexOnly) - Number(b.indexOnly));
}

/**
 * The checkpoint to start from for a version: the newest at or before atMost and at or after
 * atLeast (one older than the log's horizon names revisions compaction may have removed), the whole
 * one before an index copy of the same seq; undefined when none is.
 */
export function nearestCheckpoint(file: string, atMost: number, atLeast = 0): CheckpointAt | undefined {
  return checkpointsBeside(file).find((c) => c.seq <= atMost && c.seq >= atLeast);
}

/** file opened for reading, or undefined when there is none. */
function openIfThere(file: string): number | undefined {
  try {
    return openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function headSeq(file: string): number | undefined {
  const fd = openIfThere(file);
  if (fd === undefined) return undefined;
  try {
    const head = Buffer.alloc(CHECKPOINT_HEAD_BYTES);
    return readCheckpointHead(head.subarray(0, readSync(fd, head, 0, head.length, 0)));
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces file atomically with the checkpoint: write beside it, fsync, rename, fsync the folder.
 * With an index, its index-only copy is written in the same pass and renamed in first; then the
 * index copies past ALONG_KEPT are removed. A crash anywhere leaves each file whole or absent.
 */
export async function saveCheckpointFile(file: string, cp: Checkpoint): Promise<void> {
  const tmp = `${file}.tmp`;
  const indexed = hasIndex(cp) ? cp.indexPieces : 0;
  const along = indexed > 0 ? alongFile(file, cp.seq) : undefined;
  const fh = await open(tmp, 'w');
  const ih = along ? await open(`${along}.tmp`, 'w').catch(async (err: unknown) => (await fh.close(), Promise.reject(err))) : undefined;
  try {
    await fh.write(checkpointHead(cp.seq));
    await ih?.write(checkpointHead(cp.seq));
    // Each part straight from the store's pieces (the stored objects' own bytes): nothing is joined.
    for await (const pieces of cp.parts) {
      await fh.writev(framePart(pieces));
      await ih?.writev(framePart(pieces.slice(0, indexed)));
    }
    await fh.sync();
    await ih?.sync();
  } finally {
    await fh.close();
    await ih?.close();
  }
  crashPoint('checkpoint-before-rename');
  if (along) await rename(`${along}.tmp`, along);
  crashPoint('checkpoint-between-renames');
  await rename(tmp, file);
  await syncDir(dirname(file));
  if (along) await pruneAlong(file);
}

/**
 * Writes cp, whose parts are index pieces only (an index-only checkpoint made without a view: a
 * fork's, store/checkpoint-reader.ts indexCutAt), as the copy along the log at its seq beside file,
 * as saveCheckpointFile writes one: whole or absent after a crash.
 */
export async function saveAlongFile(file: string, cp: Checkpoint): Promise<void> {
  const along = alongFile(file, cp.seq);
  const fh = await open(`${along}.tmp`, 'w');
  try {
    await fh.write(checkpointHead(cp.seq));
    for await (const pieces of cp.parts) await fh.writev(framePart(pieces));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(`${along}.tmp`, along);
  await syncDir(dirname(file));
  await pruneAlong(file);
}

/** Removes every checkpoint beside file, the whole one and the copies along the log: the next start folds the whole log. */
export async function removeCheckpoints(file: string): Promise<void> {
  for (const c of checkpointsBeside(file)) await rm(c.file, { force: true });
}

/** Removes the index copies beside file past the newest ALONG_KEPT. */
async function pruneAlong(file: string): Promise<void> {
  const along = checkpointsBeside(file).filter((c) => c.indexOnly);
  for (const c of along.slice(ALONG_KEPT)) await rm(c.file, { force: true });
}

async function syncDir(path: string): Promise<void> {
  const dir = await open(path, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/**
 * The newest checkpoint beside file, its parts read as they are iterated: the whole one, or when
 * that is gone (or older), the newest index copy along the log; undefined when there is none.
 */
export async function loadCheckpointFile(file: string): Promise<SavedCheckpoint | undefined> {
  // Its seq was just read from its head; readParts checks it again as it opens the file.
  const newest = checkpointsBeside(file)[0];
  return newest && { seq: newest.seq, parts: readParts(newest.file, newest.seq) };
}

/** Object bytes are read into buffers of this size, each holding many parts (see PartFile). */
const SLAB = 64 << 20;
/** The walk over the parts' heads lets other work run after this many parts. */
const YIELD_EVERY = 64;

/**
 * The parts of a checkpoint file, each read only where asked (PartBytes), synchronously, from a
 * descriptor kept open until every part has been read to its end. A restart reads the parts'
 * heads (the keys: what /readyz needs) and the objects of a part when its first key is used
 * (store/lazy-slots.ts), not the whole file first: reading a 1.6 GB checkpoint of a million Events
 * was most of the time to ready (the copy from the page cache, and faulting in the fresh memory).
 * The objects go into shared 64 MiB buffers, not one per part: a thousand separately allocated
 * megabytes outside the heap each pushed V8 towards another full collection. The file may be
 * replaced meanwhile (the next checkpoint renames over it): the open descriptor still reads this one.
 */
export async function* readParts(file: string, seq: number): AsyncIterable<PartBytes> {
  const parts = new PartFile(openSync(file, 'r'));
  let walked = false;
  try {
    if (readCheckpointHead(parts.read(0, CHECKPOINT_HEAD_BYTES)) !== seq) throw new Error(`checkpoint file ${file} changed while it was read`);
    let n = 0;
    for (const { at, length } of partFrames(file, parts.fd)) {
      yield parts.part(at, length);
      if (n++ % YIELD_EVERY === YIELD_EVERY - 1) await nextTurn();
    }
    walked = true;
  } finally {
    // Stopped early (not a checkpoint the store reads, or a bad one): nothing will read its parts.
    if (!walked) parts.close();
    else parts.walked();
  }
}

/** Where each part's bytes lie in the open checkpoint file fd (after the head), read from their frames. */
function* partFrames(file: string, fd: number, peek = 0): Iterable<{ at: number; length: number; peek?: Buffer }> {
  const total = fstatSync(fd).size;
  const frame = Buffer.alloc(PART_LENGTH_BYTES + peek);
  for (let at = CHECKPOINT_HEAD_BYTES; at < total;) {
    const n = at + PART_LENGTH_BYTES <= total ? readSync(fd, frame, 0, frame.length, at) : 0;
    const length = n >= PART_LENGTH_BYTES ? frame.readUInt32BE(0) : Infinity;
    const from = at + PART_LENGTH_BYTES;
    if (from + length > total) throw new Error(`checkpoint file ${file} ends inside a part (at byte ${at})`);
    yield peek > 0 ? { at: from, length, peek: Buffer.from(frame.subarray(PART_LENGTH_BYTES, Math.min(n, PART_LENGTH_BYTES + length))) } : { at: from, length };
    at = from + length;
  }
}

/**
 * The checkpoint in file laid out: its seq and where each part's bytes lie, without reading them
 * (a reader of the file that picks the few parts it needs: the time-travel tools), with each part's
 * first `peek` bytes read in the same read as its frame. undefined when there is no file, or it is
 * not a checkpoint this code wrote.
 */
export function checkpointLayout(file: string, peek = 0): { seq: number; parts: { at: number; length: number; peek?: Buffer }[] } | undefined {
  const fd = openIfThere(file);
  if (fd === undefined) return undefined;
  try {
    const head = Buffer.alloc(CHECKPOINT_HEAD_BYTES);
    const seq = readCheckpointHead(head.subarray(0, readSync(fd, head, 0, head.length, 0)));
    return seq === undefined ? undefined : { seq, parts: [...partFrames(file, fd, peek)] };
  } finally {
    closeSync(fd);
  }
}

/** The open checkpoint file its parts read from; closed once each part was read to its end. */
class PartFile {
  private open = true;
  /** Parts handed out and not yet read to their end. */
  private unread = 0;
  private done = false;
  private slab: Buffer | undefined;
  private used = 0;

  constructor(readonly fd: number) {
    closeOnCollect.register(this, fd, this);
  }

  part(start: number, length: number): PartBytes {
    this.unread++;
    let whole = false;
    return {
      length,
      read: (from, to) => {
        if (!(from >= 0 && from <= to && to <= length)) throw new RangeError(`bytes ${from} to ${to} of a checkpoint part of ${length}`);
        const bytes = this.read(start + from, start + to);
        if (to === length && !whole) {
          whole = true;
          if (--this.unread === 0 && this.done) this.close();
        }
        return bytes;
      },
    };
  }

  /** Bytes [from, to) of the file: large ranges (a part's objects) in a shared buffer, small ones (a head) on their own. */
  read(from: number, to: number): Buffer {
    if (!this.open) throw new Error('checkpoint file read after every part was read to its end');
    const n = to - from;
    let out: Buffer;
    if (n < SLAB / 64) out = Buffer.allocUnsafe(n);
    else {
      if (!this.slab || this.used + n > this.slab.length) {
        this.slab = Buffer.allocUnsafeSlow(Math.max(n, SLAB));
        this.used = 0;
      }
      out = this.slab.subarray(this.used, (this.used += n));
    }
    for (let at = 0; at < n;) {
      const got = readSync(this.fd, out, at, n - at, from + at);
      if (got === 0) throw new Error(`checkpoint file ends at byte ${from + at}, inside a part`);
      at += got;
    }
    return out;
  }

  /** Every part is handed out: the file closes once the last is read. */
  walked(): void {
    this.done = true;
    if (this.unread === 0) this.close();
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    closeOnCollect.unregister(this);
    closeSync(this.fd);
  }
}

/** A view dropped with parts never read (a store not closed) does not keep the file open for good. */
const closeOnCollect = new FinalizationRegistry<number>((fd) => closeSync(fd));
