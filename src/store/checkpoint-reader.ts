/**
 * A checkpoint file read in place, without loading it: where its parts lie, each part's collection
 * and first key, a part's head, one key's revisions. The reader beside checkpoint-format.ts's
 * writer and loader: time travel reads checkpoints only through these functions.
 *
 * A checkpoint (checkpoint-format.ts) is the store's key index as of its version: each key of a
 * collection with every revision still in the log, in parts of up to a few thousand keys in key
 * order. Loading it whole is reading every object of the store (a gigabyte at a million Events);
 * `history` of one object needs one key's revisions. So this takes where the parts lie from the log
 * (checkpointLayout), reads the first bytes of each part's head for its collection, and searches
 * the parts of the key's collection by halves, decoding the heads of a handful of parts. The file's
 * layout is the log's and the heads' the store's: both are read through their functions.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { checkpointLayout, checkpointsBeside } from '../log/checkpoint-file.js';
import type { Checkpoint } from '../log/log.js';
import { collectionOfHead, decodePartHead, HEAD_AT, indexPieces, lastOf, MAGIC, type PartHead } from './checkpoint-format.js';

/** What is read of a part before its head is decoded: its head's length and collection. */
const PEEK = 512;

export interface Part {
  /** Where the part's bytes start in the file, and how many they are. */
  at: number;
  length: number;
  headLength: number;
  /** How many bytes of objects follow its head: none in a part of an index-only checkpoint (or one of deletes only). */
  objects: number;
  collection: string | undefined;
  /** The part's first key, when the bytes peeked at hold it: parts of another namespace are then skipped unread. */
  first: string | undefined;
}

/**
 * The newest checkpoint's version beside file (the whole one, or an index copy along the log: both
 * list every key's revisions) and key's revisions in it (oldest first, a delete negative; none when
 * the key is not in it); undefined when there is no checkpoint this code reads (none, another
 * format, or sealed by encryption at rest): the caller then loads the store as a server does.
 */
export function checkpointRevisions(beside: string, key: string): { seq: number; revisions: number[] } | undefined {
  const file = checkpointsBeside(beside)[0]?.file;
  const index = file === undefined ? undefined : checkpointIndex(file);
  if (file === undefined || index === undefined) return undefined;
  const fd = openSync(file, 'r');
  try {
    const { seq, parts } = index;
    const collection = key.slice(0, key.indexOf('/', key.indexOf('/') + 1));
    let own = parts.filter((p) => p.collection === collection);
    // With their first keys known, only the part that would hold the key is read: the last one starting at or before it.
    if (own.every((p) => p.first !== undefined)) {
      let i = own.length - 1;
      while (i >= 0 && own[i].first! > key) i--;
      own = i < 0 ? [] : [own[i]];
    }
    // By halves over the collection's parts, which hold its keys in order.
    let lo = 0;
    let hi = own.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const h = checkedHead(readHeadBytes(fd, own[mid]));
      // Not as the store writes them (src/store/checkpoint-format.ts checks the same when it loads).
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

/**
 * The checkpoint's version and its parts (each with its collection); undefined when there is none,
 * or it is no checkpoint this code reads (another format, sealed by encryption at rest).
 */
export function checkpointIndex(file: string): { seq: number; parts: Part[] } | undefined {
  // Each part's first bytes come with its frame, in one read.
  const layout = checkpointLayout(file, PEEK);
  if (!layout || layout.parts.length === 0) return undefined;
  const [mark, ...rest] = layout.parts;
  if (mark.length !== MAGIC.length || !mark.peek?.equals(MAGIC)) return undefined;
  const parts: Part[] = [];
  for (const { at, length, peek } of rest) {
    if (!peek || peek.length < HEAD_AT) return undefined;
    const headLength = peek.readUInt32BE(0);
    const head = peek.subarray(HEAD_AT, Math.min(peek.length, HEAD_AT + headLength));
    const collection = collectionOfHead(head);
    if (collection === undefined) return undefined;
    parts.push({ at, length, headLength, objects: length - HEAD_AT - headLength, collection, first: firstKeyOfHead(head, collection) });
  }
  return { seq: layout.seq, parts };
}

/**
 * The first key of a part's head from its first bytes: after the collection ("c", its string), "k"
 * and the array of keys, as encodeCheckpoint writes the head; undefined when the bytes do not reach
 * it or are laid out otherwise.
 */
function firstKeyOfHead(b: Buffer, collection: string): string | undefined {
  let at = (b[0] === 0xde ? 3 : 1) + 2;
  at += b[at] >= 0xa0 && b[at] <= 0xbf ? 1 : b[at] === 0xd9 ? 2 : 3;
  at += Buffer.byteLength(collection);
  if (b[at] !== 0xa1 || b[at + 1] !== 0x6b) return undefined;
  at += 2;
  const a = b[at];
  at += a >= 0x90 && a <= 0x9f ? 1 : a === 0xdc ? 3 : a === 0xdd ? 5 : NaN;
  const m = b[at];
  const [length, start] = m >= 0xa0 && m <= 0xbf ? [m & 0x1f, at + 1] : m === 0xd9 ? [b[at + 1], at + 2] : m === 0xda ? [b.readUInt16BE(at + 1), at + 3] : [-1, 0];
  return length < 0 || !(start + length <= b.length) ? undefined : b.toString('utf8', start, start + length);
}

/** A part's head bytes (a few hundred KiB at most), into a buffer reused from one call to the next. */
export function readHeadBytes(fd: number, part: Part): Buffer {
  if (headBuffer.length < part.headLength) headBuffer = Buffer.allocUnsafe(part.headLength * 2);
  const bytes = headBuffer.subarray(0, part.headLength);
  readSync(fd, bytes, 0, part.headLength, part.at + HEAD_AT);
  return bytes;
}

let headBuffer = Buffer.alloc(0);

/** A part's head from its bytes; undefined when its keys are none or not in order (not as the store writes them). */
export function checkedHead(bytes: Buffer): PartHead | undefined {
  const head = decodePartHead(bytes);
  if (head.k.length === 0) return undefined;
  for (let i = 1; i < head.k.length; i++) if (!(head.k[i - 1] < head.k[i])) return undefined;
  return head;
}

/**
 * The index-only checkpoint at seq, cut from the heads of a later checkpoint (file): each key with its
 * revisions up to seq, and none of the keys that have none by then. undefined when file is no
 * checkpoint this code reads, or is older than seq. A later checkpoint lists every revision of every
 * key that the log still holds, so its heads hold the index at any version from the horizon on.
 * A fork at N writes this (timetravel/fork/shared-fork.ts), so that its server is ready once the
 * heads are read, at every N, instead of folding the log from the nearest older checkpoint. The
 * objects' sizes are not known here: n holds a 0 for each object, and a reader of an index-only part
 * never uses them, since its objects come from the log.
 */
export function indexCutAt(file: string, seq: number): Checkpoint | undefined {
  const index = checkpointIndex(file);
  if (!index || index.seq < seq) return undefined;
  return { seq, parts: cutParts(file, index.parts, seq) };
}

async function* cutParts(file: string, parts: Part[], seq: number): AsyncIterable<Buffer[]> {
  const fd = openSync(file, 'r');
  try {
    yield [MAGIC];
    for (const part of parts) {
      const whole = checkedHead(readHeadBytes(fd, part));
      if (!whole) throw new Error(`${file}: a part's head is not as the store writes them`);
      const head: PartHead = { c: whole.c, k: [], r: [], n: [] };
      for (let i = 0; i < whole.k.length; i++) {
        const r = revisionsUpTo(whole.r[i], seq);
        if (r === undefined) continue;
        head.k.push(whole.k[i]);
        head.r.push(r);
        if (lastOf(r) > 0) head.n.push(0);
      }
      if (head.k.length > 0) yield indexPieces(head);
    }
  } finally {
    closeSync(fd);
  }
}

/** A key's revisions (a delete negative) at or before seq, as a part head lists them; undefined when it has none by then. */
function revisionsUpTo(r: number | number[], seq: number): number | number[] | undefined {
  if (typeof r === 'number') return Math.abs(r) <= seq ? r : undefined;
  let n = r.length;
  while (n > 0 && Math.abs(r[n - 1]) > seq) n--;
  return n === 0 ? undefined : n === 1 ? r[0] : n === r.length ? r : r.slice(0, n);
}
