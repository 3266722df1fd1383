import { setImmediate as nextTurn } from 'node:timers/promises';
import { packJson, unpackJson } from '../log/codec.js';
import type { Checkpoint } from '../log/log.js';
import type { KubeObject } from '../resources/types.js';
import { KeyIndex } from './key-index.js';
import { splitKey } from './keys.js';
import { SortedKeys } from './sorted-keys.js';
import { LazyObject, pushTo, View, type StoredObject } from './view.js';

/*
 * A checkpoint is the view as of one applied sequence, so a restart replays only the log's tail.
 *
 * Layout: MAGIC, then frames of [u32 big-endian length][msgpack of one Part]. Parts hold a few
 * thousand objects or key-index rows each, so encoding yields to the event loop between parts (a
 * million-object view takes seconds to pack, and requests must not wait for it) and decoding never
 * builds one giant value. Each object is stored as its own msgpack bytes (a bin inside the part), so
 * loading a checkpoint keeps them as bytes, as a replay does (view.ts LazyObject). Bytes that do
 * not start with MAGIC (or MAGIC_2) are not a checkpoint this code wrote:
 * the store then replays the whole log, which is always correct, compacted or not, because
 * compaction keeps each key's state at the horizon.
 */
const MAGIC = Buffer.from('orchd-checkpoint/3\n');
/** Version 2 held decoded objects where 3 holds their msgpack bytes; it is still read. */
const MAGIC_2 = Buffer.from('orchd-checkpoint/2\n');
const PART = 4096;
/**
 * A part also ends once its objects hold this many bytes, and the finished checkpoint is copied into
 * one buffer this many bytes at a time: each synchronous step copies at most ~1 MiB. At 100k Events
 * (160 MB) a 4096-object part took 100-200 ms to pack, and one copy of the whole 750 ms, which a
 * list page or write arriving meanwhile waited for.
 */
const STEP_BYTES = 1 << 20;

interface Part {
  /** key, seq, the object's msgpack bytes (version 2: the object). */
  objects?: [string, number, Uint8Array | KubeObject][];
  revs?: [string, number[]][];
}

/**
 * Encodes the view as of now. What is read synchronously (the sequence and the current objects,
 * which are immutable once stored) fixes the checkpoint's version; the key index is read part by
 * part afterwards, so revisions applied meanwhile are left out by sequence.
 */
export async function encodeCheckpoint(view: View): Promise<Checkpoint> {
  const seq = view.appliedSeq;
  // Each collection's objects in key order: loading then finds its keys sorted and skips the sort.
  const objects: StoredObject[] = [];
  for (const [collection, keys] of view.collections) {
    const held = view.objectsIn(collection);
    for (const suffix of keys.range('')) {
      const o = held?.get(suffix);
      if (o) objects.push(o);
    }
  }
  const frames: Buffer[] = [MAGIC];
  const frame = (part: Part) => {
    const body = packJson(part);
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32BE(body.length, 0);
    frames.push(head, body);
  };
  for (let i = 0; i < objects.length; ) {
    const rows: [string, number, Uint8Array][] = [];
    for (let bytes = 0; i < objects.length && rows.length < PART && bytes < STEP_BYTES; i++) {
      const o = objects[i];
      const raw = o instanceof LazyObject ? o.raw : packJson(o.obj);
      rows.push([o.key, o.seq, raw]);
      bytes += raw.length;
    }
    frame({ objects: rows });
    await nextTurn();
  }
  let revs: [string, number[]][] = [];
  for (const [key, list] of view.keyIndex.entries()) {
    const upTo = list.filter((r) => Math.abs(r) <= seq);
    if (upTo.length > 0) revs.push([key, upTo]);
    if (revs.length < PART) continue;
    frame({ revs });
    revs = [];
    await nextTurn();
  }
  if (revs.length > 0) frame({ revs });
  return { seq, data: await joinYielding(frames) };
}

/** Buffer.concat, yielding to the event loop after every STEP_BYTES copied. */
async function joinYielding(frames: readonly Buffer[]): Promise<Buffer> {
  const out = Buffer.allocUnsafeSlow(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  let sinceYield = 0;
  for (const f of frames) {
    for (let from = 0; from < f.length; ) {
      const n = Math.min(f.length - from, STEP_BYTES - sinceYield);
      f.copy(out, at, from, from + n);
      at += n;
      from += n;
      sinceYield += n;
      if (sinceYield < STEP_BYTES) continue;
      sinceYield = 0;
      await nextTurn();
    }
  }
  return out;
}

/**
 * The view a checkpoint holds, or undefined when the bytes are not a checkpoint of this format.
 * Yields between parts so /livez keeps answering while a large view loads.
 */
export async function decodeCheckpoint(cp: Checkpoint): Promise<View | undefined> {
  const bytes = Buffer.from(cp.data.buffer, cp.data.byteOffset, cp.data.byteLength);
  const magic = bytes.subarray(0, MAGIC.length);
  if (!magic.equals(MAGIC) && !magic.equals(MAGIC_2)) return undefined;
  const view = new View();
  const suffixes = new Map<string, string[]>();
  const history = new Map<string, string[]>();
  const revs: [string, number[]][] = [];
  for (let at = MAGIC.length; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    // A copy of the part: the objects' bytes are views into it, and must not hold the whole file.
    // (Not Buffer.from: it zero-fills the new buffer before copying, twice the memory traffic.)
    const copy = Buffer.allocUnsafeSlow(length);
    bytes.copy(copy, 0, at + 4, at + 4 + length);
    const part = unpackJson(copy) as Part;
    at += 4 + length;
    await nextTurn();
    for (const [key, seq, obj] of part.objects ?? []) {
      const { collection, suffix } = splitKey(key);
      view.setObject(collection, suffix, obj instanceof Uint8Array ? new LazyObject(key, seq, asBuffer(obj)) : { key, seq, obj });
      pushTo(suffixes, collection, suffix);
    }
    for (const row of part.revs ?? []) {
      revs.push(row);
      const { collection, suffix } = splitKey(row[0]);
      pushTo(history, collection, suffix);
    }
  }
  for (const [collection, list] of suffixes) view.collections.set(collection, keysOf(list));
  for (const [collection, list] of history) view.history.set(collection, keysOf(list));
  view.keyIndex = KeyIndex.from(revs);
  view.appliedSeq = cp.seq;
  return view;
}

/**
 * Keys as a checkpoint lists them: already in order when written from the sorted collections, which
 * is checked (one pass), not trusted; otherwise (an older checkpoint, the key index's order) sorted.
 */
function keysOf(list: string[]): SortedKeys {
  for (let i = 1; i < list.length; i++) if (!(list[i - 1] < list[i])) return SortedKeys.of(list);
  return SortedKeys.ofSorted(list);
}

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
