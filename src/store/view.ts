import { setImmediate as nextTurn } from 'node:timers/promises';
import { StoredEntry, unpackJson } from '../log/codec.js';
import type { LogEntry } from '../log/log.js';
import { msgpackToJson } from '../log/msgpack-json.js';
import type { KubeObject } from '../resources/types.js';
import { Revisions } from './key-index.js';
import { splitKey } from './keys.js';
import { LabelIndex } from './label-index.js';
import { SortedKeys } from './sorted-keys.js';

/** One version of one object as the view holds it. Immutable once stored: readers share it. */
export interface StoredObject {
  key: string;
  seq: number;
  obj: KubeObject;
  /**
   * UTF-8 JSON of obj, encoded at most once and shared by every reader (see encodeStored). Bytes,
   * not a string: answers and watch lines are assembled from them without transcoding, and they
   * live outside the JS heap the garbage collector walks.
   */
  json?: Buffer;
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** A committed change as the view saw it: the watch stream is made of these. */
export interface Change {
  type: ChangeType;
  seq: number;
  key: string;
  /** The object after the change; for DELETED, its last state stamped with the delete's version. */
  cur: StoredObject;
  /** The object before the change (absent for ADDED): selectors need it to turn "stopped matching" into DELETED. */
  prev?: StoredObject;
  /**
   * Watch-event bytes, encoded once and shared by every watcher that receives the same bytes: keyed
   * by event type, apiVersion (a watcher of another version of the kind gets the object re-stamped)
   * and encoding (a JSON line, a WebSocket frame).
   */
  lines?: Map<string, Buffer>;
}

/**
 * A stored object held as the msgpack bytes the log read (raw) until something reads obj: a replay
 * of a million entries then builds no object trees (building them, and the garbage collector walking
 * them, was most of a replay's time). The decoded object is kept once read, so only objects that are
 * used live on the JS heap as trees.
 */
export class LazyObject implements StoredObject {
  private decoded: KubeObject | undefined;
  /** The top-level apiVersion, noted when json was made straight from the bytes (no tree to read it from). */
  private noted: { apiVersion: string | undefined } | undefined;
  json?: Buffer;

  /**
   * The bytes are bytes[start, end): a range of the buffer they were read into (a log page, a
   * checkpoint part), not a view object of their own, which a million objects would each carry for
   * the garbage collector to mark.
   */
  constructor(
    readonly key: string,
    readonly seq: number,
    private readonly bytes: Buffer,
    private readonly start = 0,
    private readonly end = bytes.length,
  ) {}

  /** The msgpack bytes (a view made on each call). */
  get raw(): Buffer {
    return this.start === 0 && this.end === this.bytes.length ? this.bytes : this.bytes.subarray(this.start, this.end);
  }

  /** The buffer the bytes are part of, and how many they are. */
  get buffer(): ArrayBufferLike {
    return this.bytes.buffer;
  }

  get size(): number {
    return this.end - this.start;
  }

  get obj(): KubeObject {
    return (this.decoded ??= unpackJson(this.raw) as KubeObject);
  }

  get isDecoded(): boolean {
    return this.decoded !== undefined;
  }

  /** The object's JSON: from the bytes without building the tree when it is not decoded (a list of objects nobody read). */
  encode(): Buffer {
    if (!this.decoded) {
      const t = msgpackToJson(this.raw);
      if (t) {
        this.noted = { apiVersion: t.apiVersion };
        return t.json;
      }
    }
    return Buffer.from(JSON.stringify(this.obj));
  }

  get apiVersion(): unknown {
    return this.decoded || !this.noted ? this.obj.apiVersion : this.noted.apiVersion;
  }

  /** The same object with its bytes in a buffer of their own (see View.releaseBuffers). */
  moved(): LazyObject {
    const o = new LazyObject(this.key, this.seq, Buffer.from(this.raw));
    o.decoded = this.decoded;
    o.noted = this.noted;
    if (this.json) o.json = this.json;
    return o;
  }
}

const SLASH = 0x2f;

/** What a log entry holds as a stored object: its bytes, when it was read from storage, else its value. */
export function storedOf(e: LogEntry, key: string, seq: number): StoredObject {
  if (e instanceof StoredEntry) return new LazyObject(key, seq, e.bytes, e.start, e.end);
  return e.raw ? new LazyObject(key, seq, e.raw) : { key, seq, obj: e.value as KubeObject };
}

/** Slots releaseBuffers looks at between two turns of the event loop (~2 ms). */
const RELEASE_SLICE = 20_000;

/** Buffers this large are shared ones (a log page, a checkpoint part), not an object's own. */
const SHARED_BUFFER_BYTES = 64 * 1024;

/**
 * The object of s for a one-off look (a background scan of every object): a lazy object not yet
 * read is decoded for the caller and stays bytes in the view.
 */
export const peekObject = (s: StoredObject): KubeObject => (s instanceof LazyObject && !s.isDecoded ? (unpackJson(s.raw) as KubeObject) : s.obj);

export const encodeStored = (s: StoredObject): Buffer => (s.json ??= s instanceof LazyObject ? s.encode() : Buffer.from(JSON.stringify(s.obj)));

/** The apiVersion an object is stored at; for a lazy object already encoded, without decoding it. */
export const storedApiVersion = (s: StoredObject): unknown => (s instanceof LazyObject ? s.apiVersion : s.obj.apiVersion);

/** What the view knows of one key: the log entries that wrote it, and its current object (none once deleted). */
export class Slot extends Revisions {
  constructor(
    last: number,
    public cur: StoredObject | undefined,
  ) {
    super(last);
  }
}

/**
 * The current state: per collection, a slot per key (current object and revisions), each
 * collection's keys in order, and the keys its history knows. apply() is the one fold every committed
 * entry goes through, in order, at startup and live.
 *
 * One map per collection, keyed by the in-collection key, holds both the object and the revisions:
 * a write costs one lookup, a million-entry replay one map insert per key (separate maps for objects
 * and revisions, by full key and by collection, were most of a replay's time). A list walks a
 * collection's sorted keys and looks each up with the very string the sorted keys hold, whose hash
 * V8 keeps.
 */
export class View {
  private readonly slots = new Map<string, Map<string, Slot>>();
  /** Per collection, the keys that hold an object, in order. */
  readonly collections = new Map<string, SortedKeys>();
  /** Per collection, every key that has a slot (deleted ones too): what a read at a past version walks. */
  readonly history = new Map<string, SortedKeys>();
  /** Label values → keys, per collection, built when a selector first asks (see labelIndexFor). */
  readonly labels = new LabelIndex();
  appliedSeq = 0;
  /** How many keys hold an object. */
  size = 0;

  /** The slots of one collection by in-collection key (undefined: it has none yet). */
  slotsOf(collection: string): ReadonlyMap<string, Slot> | undefined {
    return this.slots.get(collection);
  }

  /** The current object of a storage key. */
  get(key: string): StoredObject | undefined {
    const { collection, suffix } = splitKey(key);
    return this.slots.get(collection)?.get(suffix)?.cur;
  }

  /** The sequence that held a storage key at version rv (undefined: it did not exist then). */
  revisionAt(key: string, rv: number): number | undefined {
    const { collection, suffix } = splitKey(key);
    return this.slots.get(collection)?.get(suffix)?.at(rv);
  }

  /** Every current object, collection by collection, in key order. */
  *objects(): IterableIterator<StoredObject> {
    for (const collection of this.collections.keys()) yield* this.list(collection);
  }

  /** Holds a key's slot as a checkpoint stored it; the caller sets the sorted keys afterwards (setKeys). */
  load(collection: string, suffix: string, slot: Slot): void {
    let m = this.slots.get(collection);
    if (!m) this.slots.set(collection, (m = new Map()));
    m.set(suffix, slot);
    if (slot.cur) this.size++;
  }

  /** A collection's sorted keys after load(): those holding objects, and every one of its history. */
  setKeys(collection: string, current: SortedKeys, history: SortedKeys): void {
    this.collections.set(collection, current);
    this.history.set(collection, history);
  }

  private collection(name: string): SortedKeys {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = new SortedKeys()));
    return c;
  }

  private historyOf(name: string): SortedKeys {
    let c = this.history.get(name);
    if (!c) this.history.set(name, (c = new SortedKeys()));
    return c;
  }

  /**
   * Startup replay: the sorted key sets are rebuilt once at the end (one sort per collection)
   * instead of taking a million ordered inserts. Nothing may read the view until endReplay().
   */
  beginReplay(): void {
    this.replay ??= { added: new Map(), deleted: new Set(), history: new Map() };
  }

  /**
   * A collection without deletes in the replay only gained keys, each once, none it had before,
   * and its history gained the same ones: one sort serves both. Deletes need the filter and dedup.
   */
  endReplay(): void {
    const r = this.replay;
    if (!r) return;
    this.replay = undefined;
    const holds = (collection: string) => {
      const m = this.slots.get(collection);
      return (k: string) => m?.get(k)?.cur !== undefined;
    };
    for (const [collection, added] of r.added) {
      const before = this.collections.get(collection)?.toArray() ?? [];
      const historyBefore = this.history.get(collection)?.size ?? 0;
      const sameHistory = !r.deleted.has(collection) && historyBefore === before.length && (r.history.get(collection)?.length ?? 0) === added.length;
      if (r.deleted.has(collection)) {
        this.collections.set(collection, SortedKeys.of(before.concat(added).filter(holds(collection))));
        continue;
      }
      const sorted = before.concat(added).sort();
      this.collections.set(collection, SortedKeys.ofSorted(sorted));
      if (sameHistory) {
        this.history.set(collection, SortedKeys.ofSorted(sorted));
        r.history.delete(collection);
      }
    }
    for (const collection of r.deleted) {
      if (r.added.has(collection)) continue;
      const left = (this.collections.get(collection)?.toArray() ?? []).filter(holds(collection));
      this.collections.set(collection, SortedKeys.ofSorted(left));
    }
    for (const [collection, added] of r.history) {
      this.history.set(collection, SortedKeys.of((this.history.get(collection)?.toArray() ?? []).concat(added)));
    }
  }

  private replay: { added: Map<string, string[]>; deleted: Set<string>; history: Map<string, string[]> } | undefined;

  /**
   * The collection of the last entry applied and its slots: consecutive entries are mostly of one
   * collection, and a replay then neither slices nor hashes a collection name per entry.
   */
  private last: { collection: string; slots: Map<string, Slot> } | undefined;

  private collectionOf(key: string): { collection: string; slots: Map<string, Slot> } {
    const last = this.last;
    if (last && key.length > last.collection.length && key.charCodeAt(last.collection.length) === SLASH && key.startsWith(last.collection)) return last;
    const { collection } = splitKey(key);
    let slots = this.slots.get(collection);
    if (!slots) this.slots.set(collection, (slots = new Map()));
    return (this.last = { collection, slots });
  }

  apply(e: LogEntry): Change {
    const { collection, slots: m } = this.collectionOf(e.key);
    const suffix = e.key.slice(collection.length + 1);
    const put = e.type === 'put';
    const cur = storedOf(e, e.key, e.seq);
    const slot = m.get(suffix);
    const prev = slot?.cur;
    // Only a collection a selector has asked about has a label index; only there do objects get read.
    if (this.labels.has(collection)) this.labels.update(collection, suffix, prev?.obj.metadata.labels, put ? cur.obj.metadata.labels : undefined);
    if (slot) {
      slot.record(e.seq, !put);
      slot.cur = put ? cur : undefined;
    } else m.set(suffix, new Slot(put ? e.seq : -e.seq, put ? cur : undefined));
    if (put && !prev) this.size++;
    else if (!put && prev) this.size--;
    const replay = this.replay;
    if (replay) {
      if (put) {
        if (!prev) listIn(replay.added, collection).push(suffix);
      } else replay.deleted.add(collection);
      if (!slot) listIn(replay.history, collection).push(suffix);
    } else {
      if (put) {
        if (!prev) this.collection(collection).add(suffix);
      } else this.collection(collection).delete(suffix);
      if (!slot) this.historyOf(collection).add(suffix);
    }
    this.appliedSeq = e.seq;
    const type: ChangeType = !put ? 'DELETED' : prev ? 'MODIFIED' : 'ADDED';
    return prev ? { type, seq: e.seq, key: e.key, cur, prev } : { type, seq: e.seq, key: e.key, cur };
  }

  /** The label index of a collection, built from its current objects on first use. */
  labelIndexFor(collection: string): LabelIndex {
    if (!this.labels.has(collection)) {
      const keys = this.collections.get(collection);
      const m = this.slots.get(collection);
      this.labels.build(
        collection,
        (function* () {
          if (!keys || !m) return;
          // A look, not a read: indexing 100k objects kept every one decoded on the heap.
          for (const suffix of keys.range('')) {
            const o = m.get(suffix)?.cur;
            yield [suffix, o && peekObject(o).metadata.labels] as [string, Record<string, string> | undefined];
          }
        })(),
      );
    }
    return this.labels;
  }

  /** The sequences compaction to horizon h keeps: per key, its state at h - 1 when that is an object. */
  keptAt(h: number): Set<number> {
    const keep = new Set<number>();
    for (const m of this.slots.values()) {
      for (const slot of m.values()) {
        const seq = slot.keptAt(h);
        if (seq !== undefined) keep.add(seq);
      }
    }
    return keep;
  }

  /**
   * Compaction of the revisions to horizon h: each key keeps its newest revision below h when that
   * is a put (the state at h - 1), and loses every older one; a key whose newest revision below h is
   * a delete and that has none after is forgotten.
   */
  compactIndex(h: number): void {
    for (const [collection, m] of this.slots) {
      for (const [suffix, slot] of m) {
        if (slot.compact(h)) continue;
        m.delete(suffix);
        this.history.get(collection)?.delete(suffix);
      }
    }
  }

  /**
   * A replayed or loaded object's bytes are a view of a buffer it shares with its neighbours (a log
   * page, a checkpoint part), and one object left current keeps the whole buffer alive: an object
   * created early and never changed would hold a page of long-gone versions. Objects whose shared
   * buffer is less than half current get bytes of their own. Returns how many moved. Yields to the
   * event loop between slices (a million slots took 100 ms); writes applied meanwhile only make a
   * buffer's use smaller than counted, so fewer objects move than could.
   */
  async releaseBuffers(): Promise<number> {
    const used = new Map<ArrayBufferLike, number>();
    const shared = (o: StoredObject | undefined): o is LazyObject => o instanceof LazyObject && o.buffer.byteLength >= SHARED_BUFFER_BYTES;
    let seen = 0;
    for (const m of this.slots.values()) {
      for (const slot of m.values()) {
        if (shared(slot.cur)) used.set(slot.cur.buffer, (used.get(slot.cur.buffer) ?? 0) + slot.cur.size);
        if (++seen % RELEASE_SLICE === 0) await nextTurn();
      }
    }
    let moved = 0;
    for (const m of this.slots.values()) {
      for (const slot of m.values()) {
        if (++seen % RELEASE_SLICE === 0) await nextTurn();
        const o = slot.cur;
        if (!shared(o) || used.get(o.buffer)! * 2 >= o.buffer.byteLength) continue;
        slot.cur = o.moved();
        moved++;
      }
    }
    return moved;
  }

  /** Objects of one collection whose in-collection key starts with prefix ('' all, 'ns/' one namespace). */
  *list(collection: string, prefix = '', after?: string): IterableIterator<StoredObject> {
    const c = this.collections.get(collection);
    const m = this.slots.get(collection);
    if (!c || !m) return;
    for (const suffix of c.range(prefix, after)) {
      const o = m.get(suffix)?.cur;
      if (o) yield o;
    }
  }
}

/** The list at k in m, created empty when missing. */
export function listIn(m: Map<string, string[]>, k: string): string[] {
  let list = m.get(k);
  if (!list) m.set(k, (list = []));
  return list;
}
