import { open, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CHECKPOINT_HEAD_BYTES, PART_LENGTH_BYTES, checkpointHead, framePart, readCheckpointHead } from './codec.js';
import type { Checkpoint, SavedCheckpoint } from './log.js';

/*
 * A checkpoint in a file of its own (codec.ts lays out its bytes), for the backends that keep
 * checkpoints on the local disk: LevelDB beside its own files, etcd in each replica's folder.
 */

/** Replaces file atomically with the checkpoint: write beside it, fsync, rename, fsync the folder. */
export async function saveCheckpointFile(file: string, cp: Checkpoint): Promise<void> {
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
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** The checkpoint in file, its parts read as they are iterated; undefined when there is none. */
export async function loadCheckpointFile(file: string): Promise<SavedCheckpoint | undefined> {
  const head = await readHead(file);
  return head && { seq: head.seq, parts: readParts(file, head.seq) };
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
