/**
 * The revisions of one key as a checkpoint file holds them, read without loading the checkpoint.
 * A checkpoint (src/store/checkpoint.ts) is the store's key index as of its version: each key of a
 * collection with every revision still in the log, in parts of up to a few thousand keys in key
 * order. Loading it whole is reading every object of the store (a gigabyte at a million Events);
 * `history` of one object needs one key's revisions. So this walks the parts' frames (a few bytes
 * each), reads each part's collection from the start of its head, and searches the parts of the
 * key's collection by halves, decoding the heads of a handful of parts.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { CHECKPOINT_HEAD_BYTES, PART_LENGTH_BYTES, readCheckpointHead, unpackJson } from '../../src/log/codec.js';
import { MAGIC, type PartHead } from '../../src/store/checkpoint.js';

/** What is read of a part before its head is decoded: its frame, head length and collection. */
const PEEK = 512;

export interface Part {
  /** Where the part's bytes start in the file (after its frame's length), and how many they are. */
  at: number;
  length: number;
  headLength: number;
  collection: string | undefined;
}

/**
 * The checkpoint's version and key's revisions in it (oldest first, a delete negative; none when the
 * key is not in it); undefined when the file is no checkpoint this code reads (none, another
 * format, or sealed by encryption at rest): the caller then loads the store as a server does.
 */
export function checkpointRevisions(file: string, key: string): { seq: number; revisions: number[] } | undefined {
  const fd = openCheckpoint(file);
  if (fd === undefined) return undefined;
  try {
    const index = checkpointIndex(fd);
    if (index === undefined) return undefined;
    const { seq, parts } = index;
    const collection = key.slice(0, key.indexOf('/', key.indexOf('/') + 1));
    const own = parts.filter((p) => p.collection === collection);
    // By halves over the collection's parts, which hold its keys in order.
    let lo = 0;
    let hi = own.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const h = headOf(fd, own[mid]);
      // Not as the store writes them (src/store/checkpoint.ts checks the same when it loads).
      if (h === undefined) return undefined;
      if (key < h.k[0]) hi = mid - 1;
      else if (key > h.k[h.k.length - 1]) lo = mid + 1;
      else {
        const i = h.k.indexOf(key);
        const r = i < 0 ? [] : h.r[i];
        return { seq, revisions: typeof r === 'number' ? [r] : r };
      }
    }
    return { seq, revisions: [] };
  } finally {
    closeSync(fd);
  }
}

/** The checkpoint file opened for reading; undefined when there is none. */
export function openCheckpoint(file: string): number | undefined {
  try {
    return openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * The checkpoint's version and its parts (each with its collection) in the open file fd; undefined
 * when the file is no checkpoint this code reads (another format, sealed by encryption at rest).
 */
export function checkpointIndex(fd: number): { seq: number; parts: Part[] } | undefined {
  const head = Buffer.alloc(CHECKPOINT_HEAD_BYTES);
  const seq = readCheckpointHead(head.subarray(0, readSync(fd, head, 0, head.length, 0)));
  if (seq === undefined) return undefined;
  const parts = partsOf(fd, fstatSync(fd).size);
  if (parts === undefined || parts.some((p) => p.collection === undefined)) return undefined;
  return { seq, parts };
}

/** Every part after the mark, with its collection; undefined when the first part is not the mark. */
function partsOf(fd: number, size: number): Part[] | undefined {
  const peek = Buffer.alloc(PEEK);
  const parts: Part[] = [];
  for (let at = CHECKPOINT_HEAD_BYTES, first = true; at < size; first = false) {
    const n = readSync(fd, peek, 0, PEEK, at);
    if (n < PART_LENGTH_BYTES) throw new Error(`checkpoint ends inside a part's frame (at byte ${at})`);
    const length = peek.readUInt32BE(0);
    if (first) {
      if (length !== MAGIC.length || !peek.subarray(PART_LENGTH_BYTES, PART_LENGTH_BYTES + length).equals(MAGIC)) return undefined;
    } else {
      const headLength = peek.readUInt32BE(PART_LENGTH_BYTES);
      parts.push({ at: at + PART_LENGTH_BYTES, length, headLength, collection: collectionIn(peek.subarray(2 * PART_LENGTH_BYTES, Math.min(n, 2 * PART_LENGTH_BYTES + headLength))) });
    }
    at += PART_LENGTH_BYTES + length;
  }
  return parts;
}

/**
 * The collection a part's head names: its first field, as msgpackr writes {c, k, r, n} (a map, then
 * "c" and a string). undefined when the bytes are laid out otherwise.
 */
function collectionIn(b: Buffer): string | undefined {
  let at = b[0] >= 0x80 && b[0] <= 0x8f ? 1 : b[0] === 0xde ? 3 : -1;
  if (at < 0 || b[at] !== 0xa1 || b[at + 1] !== 0x63) return undefined;
  at += 2;
  const m = b[at];
  const [length, start] = m >= 0xa0 && m <= 0xbf ? [m & 0x1f, at + 1] : m === 0xd9 ? [b[at + 1], at + 2] : m === 0xda ? [b.readUInt16BE(at + 1), at + 3] : [-1, 0];
  if (length < 0 || start + length > b.length) return undefined;
  return b.toString('utf8', start, start + length);
}

function headOf(fd: number, part: Part): PartHead | undefined {
  const bytes = Buffer.allocUnsafe(part.headLength);
  readSync(fd, bytes, 0, part.headLength, part.at + PART_LENGTH_BYTES);
  return checkedHead(bytes);
}

/** A part's head from its bytes; undefined when its keys are none or not in order (not as the store writes them). */
export function checkedHead(bytes: Buffer): PartHead | undefined {
  const head = unpackJson(bytes) as PartHead;
  if (head.k.length === 0) return undefined;
  for (let i = 1; i < head.k.length; i++) if (!(head.k[i - 1] < head.k[i])) return undefined;
  return head;
}
