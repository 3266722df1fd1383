import { setImmediate as nextTurn } from 'node:timers/promises';
import type { KubeObject } from '../api/types.js';
import { StoreError } from './errors.js';
import { splitKey } from '../api/object-keys.js';
import { mergeSorted } from './label-index.js';
import { LazySlots } from './lazy-slots.js';
import type { Slot } from './slot.js';
import type { VersionedView } from './sources.js';
import type { StoredObject } from './stored-object.js';
import type { View } from './view.js';

export interface ListQuery {
  collection: string;
  /** In-collection key prefix: '' for all, 'ns/' for one namespace. */
  prefix: string;
  /** The whole selector (labels, fields, shard); absent = everything. */
  matches?: (obj: KubeObject) => boolean;
  /**
   * Equality and `in` label terms of the selector: a read of the current state walks only the
   * label index's keys for the most selective one. matches must still hold the full selector.
   */
  indexTerms?: readonly { key: string; values: readonly string[] }[];
  limit?: number;
  /** Resume after this in-collection key (from a continue token). */
  after?: string;
  /** Read the state as of this version (Exact, or a continued snapshot); undefined = the current view. */
  atSeq?: number;
  /** For an unfiltered continued list: how many objects remained after the previous page. */
  remainingBefore?: number;
}

export interface ListResult {
  items: StoredObject[];
  /** The version the items are consistent at: the list's resourceVersion. */
  seq: number;
  /** Set when more remains after the last item returned: where the next page starts. */
  next?: string;
  /** Objects left after this page, for an unfiltered list with more to come (Kubernetes' remainingItemCount). */
  remaining?: number;
}

/**
 * After a full page, how many further keys are looked at to decide whether anything more matches.
 * Past the budget the answer is "maybe", and the page carries a continue token (which Kubernetes
 * allows: a continued page may come back empty); within it, continue means more items exist.
 */
const LOOKAHEAD = 256;

/** How many old revisions a read at a past version reads from the log at once. */
const PAST_CHUNK = 128;
/** How many keys a read at a past version resolves between two matches checks. */
const PAST_KEYS = 1024;

/** A version older than what compaction kept cannot be read. */
export function checkReadable(store: VersionedView, seq: number): void {
  if (seq < store.oldestVersion) throw new StoreError('COMPACTED', '', `version ${seq} is compacted; the oldest readable version is ${store.oldestVersion}`, seq, store.oldestVersion);
}

/**
 * A page of a collection, from the current view or at a past version. The current view walks the
 * collection's keys, or the label index's keys when the selector has an equality or `in` term,
 * with no await: a page is one consistent moment. A past version walks every key the collection
 * had since the compaction horizon and asks the key index which revision held it then: objects
 * unchanged since come from the view, older revisions are read from the log by sequence number.
 */
export async function listObjects(store: VersionedView, q: ListQuery): Promise<ListResult> {
  const limit = q.limit && q.limit > 0 ? q.limit : Infinity;
  if (limit === Infinity && q.atSeq === undefined) await readyToWalk(store, q);
  const seq = q.atSeq ?? store.appliedSeq;
  if (seq > store.appliedSeq) throw new StoreError('FUTURE_SEQ', q.collection, `version ${seq} is newer than ${store.appliedSeq}`, seq);
  const current = seq === store.appliedSeq;
  const filtered = q.matches !== undefined;
  const items: StoredObject[] = [];
  let last: string | undefined;
  let more = false;

  if (current) {
    const slots = store.view.slotsOf(q.collection) ?? new Map<string, Slot>();
    const keys = candidates(store, q);
    const matches = q.matches;
    for (let r = keys.next(); !r.done; r = keys.next()) {
      const s = slots.get(r.value)?.cur;
      if (!s || (matches && !matches(s.obj))) continue;
      items.push(s);
      last = r.value;
      if (items.length >= limit) {
        more = lookahead(keys, (suffix) => {
          const o = slots.get(suffix)?.cur;
          return o !== undefined && (!matches || matches(o.obj));
        });
        break;
      }
    }
  } else {
    checkReadable(store, seq);
    const keys = store.view.history.get(q.collection)?.range(q.prefix, q.after) ?? [][Symbol.iterator]();
    // Keys resolve in order: a revision the view still holds costs nothing, older ones are read from
    // the log, up to PAST_CHUNK of them concurrently (LevelDB serves gets on its thread pool), not
    // one round trip after another. A page under writes then waits for one round of reads at most,
    // and for none when nothing it holds has changed since. Unfiltered, a chunk never holds more
    // objects than the page still needs.
    read: for (;;) {
      const want = q.matches ? Infinity : limit - items.length;
      const chunk: string[] = [];
      const pending: (StoredObject | Promise<StoredObject | undefined> | undefined)[] = [];
      let reads = 0;
      for (let existing = 0; reads < PAST_CHUNK && existing < want && chunk.length < PAST_KEYS;) {
        const r = keys.next();
        if (r.done) break;
        const s = at(store, q.collection, r.value, seq);
        chunk.push(r.value);
        pending.push(s);
        if (s !== undefined) existing++;
        if (s instanceof Promise) reads++;
      }
      if (chunk.length === 0) break;
      // Nothing to read (no object changed since seq): no promise per key, no turn of the event loop.
      const found = reads === 0 ? (pending as (StoredObject | undefined)[]) : await Promise.all(pending);
      for (let i = 0; i < chunk.length; i++) {
        const s = found[i];
        if (!s || (q.matches && !q.matches(s.obj))) continue;
        items.push(s);
        last = chunk[i];
        if (items.length >= limit) {
          more = found.slice(i + 1).some((o) => o !== undefined && (!q.matches || q.matches(o.obj))) || (await lookaheadAt(store, q, keys, seq));
          break read;
        }
      }
    }
    // A compaction that passed this version while the page was read may have dropped what it read.
    checkReadable(store, seq);
  }

  if (!more || last === undefined) return { items, seq };
  const result: ListResult = { items, seq, next: last };
  if (!filtered && !q.indexTerms) result.remaining = q.remainingBefore !== undefined ? q.remainingBefore - items.length : countAfter(store, q, seq, last, current);
  return result;
}

/** Before an unpaged walk of the current state: what it would otherwise read or make in one synchronous step. */
async function readyToWalk(store: VersionedView, q: ListQuery): Promise<void> {
  // Right after a start from a copy along the log, the walk would make every part not read yet, a
  // get per object, holding the event loop (at 1M, 36 s against 19 s: bench/RESULTS.md section 58):
  // it waits for the pass that reads them in order instead.
  if (store.unread) await store.unread;
  // And the parts of a checkpoint not made yet are made one per turn, where the walk would make them
  // all at once (RESULTS 64). A label index walk touches only its own keys.
  const slots = store.view.slotsOf(q.collection);
  if (slots instanceof LazySlots && !q.indexTerms?.length) await slots.makeEach(q.prefix, nextTurn);
}

/** The keys a current read walks: the label index's for the most selective indexable term, else the collection's. */
function candidates(store: VersionedView, q: ListQuery): Iterator<string> {
  const view = store.view;
  if (q.indexTerms && q.indexTerms.length > 0) {
    const index = view.labelIndexFor(q.collection);
    let best: { sets: NonNullable<ReturnType<typeof index.keys>>[]; size: number } | undefined;
    for (const t of q.indexTerms) {
      const sets = t.values.map((v) => index.keys(q.collection, t.key, v)).filter((s) => s !== undefined);
      const size = sets.reduce((n, s) => n + s.size, 0);
      if (!best || size < best.size) best = { sets, size };
    }
    const streams = best!.sets.map((s) => s.range(q.prefix, q.after));
    return streams.length === 1 ? streams[0] : mergeSorted(streams);
  }
  return view.collections.get(q.collection)?.range(q.prefix, q.after) ?? [][Symbol.iterator]();
}

/** Whether one of the next keys holds a match, within the budget (past it: assume so). */
function lookahead(keys: Iterator<string>, hit: (suffix: string) => boolean): boolean {
  for (let n = 0; n < LOOKAHEAD; n++) {
    const r = keys.next();
    if (r.done) return false;
    if (hit(r.value)) return true;
  }
  return true;
}

async function lookaheadAt(store: VersionedView, q: ListQuery, keys: Iterator<string>, seq: number): Promise<boolean> {
  for (let n = 0; n < LOOKAHEAD; n++) {
    const r = keys.next();
    if (r.done) return false;
    // Unfiltered, existence is enough: the key index answers it without reading the log.
    if (!q.matches) {
      if (store.view.slotsOf(q.collection)?.get(r.value)?.at(seq) !== undefined) return true;
      continue;
    }
    const s = await at(store, q.collection, r.value, seq);
    if (s && q.matches(s.obj)) return true;
  }
  return true;
}

/** Objects after `after` at seq: whole chunks of the current keys, or a key index walk at a past version (first page of an Exact list only). */
function countAfter(store: VersionedView, q: ListQuery, seq: number, after: string, current: boolean): number {
  if (current) return store.view.collections.get(q.collection)?.countRange(q.prefix, after) ?? 0;
  let n = 0;
  const slots = store.view.slotsOf(q.collection);
  for (const suffix of store.view.history.get(q.collection)?.range(q.prefix, after) ?? []) {
    if (slots?.get(suffix)?.at(seq) !== undefined) n++;
  }
  return n;
}

/** The object a key held at seq: at once when the view still holds that revision, else read from the log. */
function at(store: VersionedView, collection: string, suffix: string, seq: number): StoredObject | Promise<StoredObject | undefined> | undefined {
  const slot = store.view.slotsOf(collection)?.get(suffix);
  const cur = slot?.cur;
  // Not written since seq: what it held then, without a search of the revisions.
  if (cur && cur.seq <= seq) return cur;
  const rev = slot?.at(seq);
  return rev === undefined ? undefined : store.revision(`${collection}/${suffix}`, rev);
}

/** One object as of a version (Exact get), or undefined if it did not exist then. */
export async function getAt(store: VersionedView, key: string, seq: number): Promise<StoredObject | undefined> {
  if (seq > store.appliedSeq) throw new StoreError('FUTURE_SEQ', key, `version ${seq} is newer than ${store.appliedSeq}`, seq);
  if (seq === store.appliedSeq) return store.get(key);
  checkReadable(store, seq);
  const { collection, suffix } = splitKey(key);
  const s = await at(store, collection, suffix, seq);
  checkReadable(store, seq);
  return s;
}

/**
 * The namespaces holding objects of a collection, each once: keys sort by <namespace>/<name>, so
 * each step skips past a whole namespace (names are DNS names: every one sorts before U+FFFF).
 */
export function* namespacesOf(view: View, collection: string): IterableIterator<string> {
  const keys = view.collections.get(collection);
  if (!keys) return;
  for (let after: string | undefined; ;) {
    const next = keys.range('', after).next();
    if (next.done) return;
    const ns = next.value.slice(0, next.value.indexOf('/'));
    yield ns;
    after = `${ns}/\uffff`;
  }
}
