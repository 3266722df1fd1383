import { packJson, unpackJson } from '../log/codec.js';
import { partBytes, type Checkpoint, type SavedCheckpoint } from '../log/log.js';
import type { IndexedCheckpoint } from '../log/checkpoint-file.js';
import { SortedKeys } from './sorted-keys.js';
import { LazySlots } from './lazy-slots.js';
import { listIn } from '../api/object-keys.js';
import { Slot } from './slot.js';
import { bytesOf, LazyObject, type StoredObject } from './stored-object.js';
import { View } from './view.js';
import { LogObjects, type ReadEntries } from './checkpoint-objects.js';

/*
 * A checkpoint is the view as of one applied sequence, so a restart replays only the log's tail.
 *
 * Parts: the first is MAGIC; each next one holds up to PART keys of one collection, in key order, as
 * [u32 big-endian length of the head][msgpack head][the objects' msgpack bytes, one after another].
 * The head lists the keys, their revisions (a number when the key was written once) and the byte
 * size of each object (keys whose newest revision is a delete have none). The objects' bytes are the
 * stored objects' own (a replayed object is still the bytes the log read: view.ts LazyObject), handed
 * to the log as pieces and written with one vectored write per part: nothing is copied into a
 * checkpoint, and loading one keeps each object as a view of its part's buffer. Bytes that do not
 * start with MAGIC are not a checkpoint this code wrote: the store then replays the whole log, which
 * is always correct, compacted or not, because compaction keeps each key's state at the horizon.
 *
 * A part's first two pieces (its length and head) are its index: the log keeps index-only copies of
 * older checkpoints along the log (log/checkpoint-file.ts). A part of one holds its head and no
 * object bytes; a reader takes each key's object at the revision the head names from the log.
 */
/** How many leading pieces of a part are its index (the head's length, the head). */
export const INDEX_PIECES = 2;
export const MAGIC = Buffer.from('orchd-checkpoint/4\n');
export const PART = 4096;
/** A part also ends once its objects hold this many bytes: each synchronous step handles ~1 MiB. */
export const STEP_BYTES = 1 << 20;

export interface PartHead {
  /** The collection. */
  c: string;
  /** Storage keys. */
  k: string[];
  /** Revisions of each key, oldest first; one number when there is one. */
  r: (number | number[])[];
  /** Byte sizes of the objects, for the keys that hold one, in order. */
  n: number[];
}

/** Where a part's head starts: after its length (u32 big-endian). Its objects start after the head. */
export const HEAD_AT = 4;

/** A part's head from its bytes (the ones after HEAD_AT, as long as the part's first 4 bytes say). */
export const decodePartHead = (bytes: Buffer): PartHead => unpackJson(bytes) as PartHead;

/**
 * The collection a part's head names, from the first bytes of the head (a few hundred are enough):
 * its first field, as encodeCheckpoint writes {c, k, r, n} (a map, then "c" and a string). Lets a
 * reader that wants one collection skip the other parts without decoding their heads; undefined
 * when the bytes are laid out otherwise.
 */
export function collectionOfHead(b: Buffer): string | undefined {
  let at = b[0] >= 0x80 && b[0] <= 0x8f ? 1 : b[0] === 0xde ? 3 : -1;
  if (at < 0 || b[at] !== 0xa1 || b[at + 1] !== 0x63) return undefined;
  at += 2;
  const m = b[at];
  const [length, start] = m >= 0xa0 && m <= 0xbf ? [m & 0x1f, at + 1] : m === 0xd9 ? [b[at + 1], at + 2] : m === 0xda ? [b.readUInt16BE(at + 1), at + 3] : [-1, 0];
  if (length < 0 || start + length > b.length) return undefined;
  return b.toString('utf8', start, start + length);
}

/** The object a key held at revision rev, read from the log. */
export type ReadRevision = (key: string, rev: number) => Promise<StoredObject>;

/**
 * The view as of now. Only the sequence and each collection's keys are taken synchronously (a copy
 * of the sorted keys: 17 ms at a million keys, where looking every object up held requests for
 * 300 ms); each part then reads its keys' slots as the log writes it. A key written
 * since holds a newer object than the checkpoint's: the one it held at the checkpoint's version is
 * read back from the log by its revision (what compaction keeps, since it never passes the newest
 * checkpoint), and revisions applied meanwhile are left out by sequence.
 */
export function encodeCheckpoint(view: View, read: ReadRevision): IndexedCheckpoint {
  const seq = view.appliedSeq;
  const collections = Array.from(view.history, ([collection, keys]) => ({ collection, suffixes: keys.toArray() }));
  return { seq, parts: parts(view, seq, collections, read), indexPieces: INDEX_PIECES };
}

async function* parts(view: View, seq: number, collections: { collection: string; suffixes: string[] }[], read: ReadRevision): AsyncIterable<Uint8Array[]> {
  yield [MAGIC];
  for (const { collection, suffixes } of collections) {
    const slots = view.slotsOf(collection);
    for (let i = 0; i < suffixes.length;) {
      const head: PartHead = { c: collection, k: [], r: [], n: [] };
      const bodies: (Buffer | Promise<Buffer>)[] = [];
      for (let bytes = 0; i < suffixes.length && head.k.length < PART && bytes < STEP_BYTES; i++) {
        const slot = slots?.get(suffixes[i]);
        // Gone from the slots (compaction forgot a deleted key) or created since: absent at seq.
        const revs = slot?.upTo(seq);
        if (revs === undefined) continue;
        const key = `${collection}/${suffixes[i]}`;
        head.k.push(key);
        head.r.push(revs);
        const last = typeof revs === 'number' ? revs : revs[revs.length - 1];
        if (last < 0) continue;
        const cur = slot!.cur;
        const body = cur && cur.seq === last ? bytesOf(cur) : read(key, last).then(bytesOf);
        bodies.push(body);
        if (!(body instanceof Promise)) bytes += body.length;
      }
      if (head.k.length === 0) continue;
      yield partPieces(head, await Promise.all(bodies));
    }
  }
}

/** A key as a checkpoint built outside a view holds it: its revisions (oldest first, a delete negative) and its newest object's byte size. */
export interface HeldKey {
  r: number | number[];
  size: number;
}

/**
 * The index-only checkpoint at seq of keys held outside a view (a fork's import, which keeps no
 * store, and whose objects are in its log already): each collection's keys (sorted here when they
 * are not), in parts cut as encodeCheckpoint cuts them, each part its index pieces alone, as a copy
 * along the log is. A server reads each part's objects from the log when the part is first used.
 */
export function checkpointOfKeys(seq: number, byCollection: Map<string, string[]>, held: (key: string) => HeldKey): Checkpoint {
  return { seq, parts: keyParts(byCollection, held) };
}

async function* keyParts(byCollection: Map<string, string[]>, held: (key: string) => HeldKey): AsyncIterable<Buffer[]> {
  yield [MAGIC];
  for (const [c, keys] of byCollection) {
    // Most often key order already (names made in order): checked, not trusted.
    if (!inOrder(keys)) keys.sort();
    for (let i = 0; i < keys.length;) {
      const head: PartHead = { c, k: [], r: [], n: [] };
      for (let bytes = 0; i < keys.length && head.k.length < PART && bytes < STEP_BYTES; i++) {
        const s = held(keys[i]);
        head.k.push(keys[i]);
        head.r.push(s.r);
        if (lastOf(s.r) < 0) continue;
        head.n.push(s.size);
        bytes += s.size;
      }
      yield indexPieces(head);
    }
  }
}

/**
 * A part as the pieces a checkpoint file writes: its head (with each object's size) and the objects'
 * bytes, which are the objects of head.k's keys whose newest revision is a put, in order.
 */
function partPieces(head: PartHead, objects: Buffer[]): Buffer[] {
  head.n = objects.map((b) => b.length);
  return [...indexPieces(head), ...objects];
}

/** A part's index as its first INDEX_PIECES pieces: the head's length, the head. */
export function indexPieces(head: PartHead): Buffer[] {
  const packed = packJson(head);
  const length = Buffer.allocUnsafe(HEAD_AT);
  length.writeUInt32BE(packed.length, 0);
  return [length, packed];
}

/**
 * The view a checkpoint holds, or undefined when its parts are not a checkpoint of this format.
 * Parts are read while the one before is looked at, so /livez keeps answering while a large view
 * loads. Only the heads are read and decoded now (the sorted keys, and how many objects there are);
 * each part's objects are read, and its slots made, when a key of the part is first used
 * (lazy-slots.ts; a checkpoint file reads them from the disk only then: log/checkpoint-file.ts).
 * An index-only checkpoint's objects are read from the log (read), all of them in one pass in seq
 * order once every head is read (checkpoint-objects.ts); undefined when one is gone (compacted).
 * Where fromLog reads one entry at once (LogObjects.onUse), none is read now: a part reads its own
 * when first used, and the caller may read the rest later (fromLog.readUnread).
 */
export async function decodeCheckpoint(cp: SavedCheckpoint, read?: ReadEntries, fromLog = new LogObjects()): Promise<View | undefined> {
  const view = new View();
  const current = new Map<string, string[]>();
  const history = new Map<string, string[]>();
  const slots = new Map<string, { slots: LazySlots; objects: number }>();
  let marked = false;
  for await (const stored of cp.parts) {
    const part = partBytes(stored);
    if (!marked) {
      if (part.length !== MAGIC.length || !part.read(0, part.length).equals(MAGIC)) return undefined;
      marked = true;
      continue;
    }
    const headLength = part.read(0, HEAD_AT).readUInt32BE(0);
    const objectsAt = HEAD_AT + headLength;
    if (objectsAt > part.length) throw new Error(`checkpoint at ${cp.seq}: a part ends inside its head`);
    const head = decodePartHead(part.read(HEAD_AT, objectsAt));
    // An index-only part (a checkpoint along the log): its objects come from the log, noted now, read after the heads.
    const indexOnly = objectsAt === part.length && head.n.length > 0;
    if (indexOnly && !read && !fromLog.onUse) return undefined;
    const first = fromLog.size;
    const c = head.c;
    const prefix = c.length + 1;
    const held = listIn(current, c);
    const known = listIn(history, c);
    let collection = slots.get(c);
    if (!collection) slots.set(c, (collection = { slots: new LazySlots(), objects: 0 }));
    const suffixes: string[] = new Array(head.k.length);
    let at = objectsAt;
    for (let i = 0, o = 0; i < head.k.length; i++) {
      const suffix = head.k[i].slice(prefix);
      suffixes[i] = suffix;
      known.push(suffix);
      const rev = lastOf(head.r[i]);
      if (rev < 0) continue;
      if (indexOnly) fromLog.want(head.k[i], rev);
      else {
        const size = head.n[o++];
        if (size === undefined || at + size > part.length) throw new Error(`checkpoint at ${cp.seq}: the part of ${c} ends before the object of ${head.k[i]}`);
        at += size;
      }
      held.push(suffix);
      collection.objects++;
    }
    const end = fromLog.size;
    collection.slots.addPart(
      indexOnly
        ? {
            suffixes,
            buffer: undefined,
            get bytes() {
              return fromLog.bytes(first, end);
            },
            slots: () => slotsOf(head, (o) => fromLog.object(first + o)),
          }
        : {
            suffixes,
            buffer: Buffer.isBuffer(stored) ? stored.buffer : undefined,
            bytes: at - objectsAt,
            slots: () => slotsOf(head, partObjects(head, objectsAt === part.length ? EMPTY : part.read(objectsAt, part.length))),
          },
    );
  }
  if (!marked) return undefined;
  if (fromLog.onUse) fromLog.noted();
  else if (fromLog.size > 0 && !(await fromLog.read(read!))) return undefined;
  for (const [c, known] of history) {
    const held = current.get(c) ?? [];
    const sorted = inOrder(known);
    const { slots: lazy, objects } = slots.get(c)!;
    // Found by binary search over parts only when every key of the collection comes in order.
    if (!sorted) lazy.makeAll();
    view.loadSlots(c, lazy, objects);
    // Most often no key of the collection was deleted: both lists are the same keys, checked once.
    view.setKeys(c, held.length === known.length ? keysOf(held, sorted) : keysOf(held, inOrder(held)), keysOf(known, sorted));
  }
  view.appliedSeq = cp.seq;
  return view;
}

const EMPTY = Buffer.alloc(0);

export const lastOf = (r: number | number[]): number => (typeof r === 'number' ? r : r[r.length - 1]);

/** The slots of a part's keys: object(o, key, rev) is the current object of the o-th key that holds one, asked for in order. */
function slotsOf(head: PartHead, object: (o: number, key: string, rev: number) => LazyObject): Slot[] {
  const out: Slot[] = new Array(head.k.length);
  for (let i = 0, o = 0; i < head.k.length; i++) {
    const r = head.r[i];
    const slot = new Slot(lastOf(r), undefined);
    if (typeof r !== 'number') slot.older = r.slice(0, -1);
    if (slot.last > 0) slot.cur = object(o++, head.k[i], slot.last);
    out[i] = slot;
  }
  return out;
}

/** A whole part's objects, asked for in order: each a range of its object bytes, their sizes checked when it was loaded. */
function partObjects(head: PartHead, objects: Buffer): (o: number, key: string, rev: number) => LazyObject {
  let at = 0;
  return (o, key, rev) => new LazyObject(key, rev, objects, at, (at += head.n[o]));
}

/** Keys come in order, as they were written from the sorted keys: checked (one pass), not trusted. */
export function inOrder(list: readonly string[]): boolean {
  for (let i = 1; i < list.length; i++) if (!(list[i - 1] < list[i])) return false;
  return true;
}

const keysOf = (list: string[], sorted: boolean): SortedKeys => (sorted ? SortedKeys.ofSorted(list) : SortedKeys.of(list));
