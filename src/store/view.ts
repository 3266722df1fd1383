import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LogEntry } from '../log/log.js';
import { listIn, splitKey } from '../api/object-keys.js';
import { LabelIndex } from './label-index.js';
import { LazySlots } from './lazy-slots.js';
import { Slot } from './slot.js';
import { SortedKeys } from './sorted-keys.js';
import { Change, type ChangeType } from './change.js';
import { LazyObject, peekObject, storedOf, type StoredObject } from './stored-object.js';

// Readers take stored objects from the view, as they did before stored-object.ts was split out of it.
export { Slot } from './slot.js';
export { LazyObject, encodeObject, encodeStored, peekObject, storedApiVersion, storedOf, type StoredObject } from './stored-object.js';
export { Change, type ChangeType } from './change.js';

const SLASH = 0x2f;

/** Slots releaseBuffers looks at between two turns of the event loop (~2 ms). */
const RELEASE_SLICE = 20_000;

/** Buffers this large are shared ones (a log page, a checkpoint part), not an object's own. */
const SHARED_BUFFER_BYTES = 64 * 1024;

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

  /** Checkpoint parts not yet made into slots (see LazySlots): the first read of their keys makes them. */
  get unmadeParts(): number {
    let n = 0;
    for (const m of this.slots.values()) if (m instanceof LazySlots) n += m.unmade;
    return n;
  }
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

  /** Holds a collection's slots as a checkpoint stored them, `objects` of them current; the caller sets the sorted keys afterwards (setKeys). */
  loadSlots(collection: string, slots: Map<string, Slot>, objects: number): void {
    this.slots.set(collection, slots);
    this.size += objects;
  }

  /** A collection's sorted keys after loadSlots(): those holding objects, and every one of its history. */
  setKeys(collection: string, current: SortedKeys, history: SortedKeys): void {
    this.collections.set(collection, current);
    this.history.set(collection, history);
  }

  /** The sorted keys of a collection in `keys` (collections or history), created empty when missing. */
  private keysIn(keys: Map<string, SortedKeys>, name: string): SortedKeys {
    let c = keys.get(name);
    if (!c) keys.set(name, (c = new SortedKeys()));
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
        if (!prev) this.keysIn(this.collections, collection).add(suffix);
      } else this.keysIn(this.collections, collection).delete(suffix);
      if (!slot) this.keysIn(this.history, collection).add(suffix);
    }
    this.appliedSeq = e.seq;
    const type: ChangeType = !put ? 'DELETED' : prev ? 'MODIFIED' : 'ADDED';
    return new Change(type, e.seq, e.key, cur, prev);
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
    // Objects of a checkpoint's parts not yet made into slots are current: counted, not made.
    const madeSlots = (m: Map<string, Slot>) => (m instanceof LazySlots ? m.made() : m.values());
    for (const m of this.slots.values()) {
      if (m instanceof LazySlots) m.countUnmade(used);
      for (const slot of madeSlots(m)) {
        if (shared(slot.cur)) used.set(slot.cur.buffer, (used.get(slot.cur.buffer) ?? 0) + slot.cur.size);
        if (++seen % RELEASE_SLICE === 0) await nextTurn();
      }
    }
    let moved = 0;
    for (const m of this.slots.values()) {
      for (const slot of madeSlots(m)) {
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
