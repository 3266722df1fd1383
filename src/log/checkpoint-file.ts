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
  return head && { seq: head.seq, parts: readParts(file, head) };
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
