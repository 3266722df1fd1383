import { Observable, Subject } from 'rxjs';
import type { Subscriber } from 'rxjs';
import type { KubeObject } from '../api/types.js';
import { splitKey } from '../api/object-keys.js';
import { Turns } from './turns.js';
import type { Change } from './view.js';

/**
 * Where a live watcher can be found from a change: the one exact term of its selector that the
 * index files it under. A change reaches the watchers filed under a term its object (before or
 * after the change) has, plus the scanned ones; the watcher still applies its whole selector, so
 * the index only decides who is asked, never what they receive.
 */
export type WatchRoute =
  { by: 'scan' } | { by: 'namespace'; namespace: string } | { by: 'label'; key: string; value: string } | { by: 'field'; path: string; value: string; get: (o: KubeObject) => string };

const namespaceOf = (key: string, collection: string): string => {
  const end = key.indexOf('/', collection.length + 1);
  return end < 0 ? '' : key.slice(collection.length + 1, end);
};

/**
 * The committed changes of the store, as one hot batched stream per collection: a commit costs the
 * subscribers of the collections it touched. Each collection's watchers hang off one index, so a
 * change costs the watchers that can match it (Kubernetes' watch cache does this for pods by node
 * name), not all watchers of its collection.
 */
export class CollectionStreams {
  private readonly subjects = new Map<string, Subject<Change[]>>();
  private readonly indexes = new Map<string, WatchIndex>();
  private closed = false;
  /** The watchers catching up from the log take turns, page by page, behind live work (see watch.ts catchUp$). */
  readonly catchUpTurns = new Turns();
  /** Open watches by collection, whatever they are doing (initial state, catch-up, live): for /metrics. */
  private readonly watching = new Map<string, number>();

  /** Counts a watch of collection open until the returned function is called. */
  watcherOpened(collection: string): () => void {
    this.watching.set(collection, (this.watching.get(collection) ?? 0) + 1);
    return () => {
      const n = this.watching.get(collection)! - 1;
      if (n === 0) this.watching.delete(collection);
      else this.watching.set(collection, n);
    };
  }

  /** Open watches by collection (collections without any left out). */
  watchers(): ReadonlyMap<string, number> {
    return this.watching;
  }

  /** The committed changes of one collection, one array per commit batch that touched it. */
  of(collection: string): Observable<Change[]> {
    let s = this.subjects.get(collection);
    if (!s) this.subjects.set(collection, (s = new Subject()));
    return s.asObservable();
  }

  /** The changes of a collection that can concern a watcher filed under route, one array per commit batch. */
  live(collection: string, route: WatchRoute): Observable<Change[]> {
    return new Observable<Change[]>((sub) => {
      if (this.closed) return sub.complete();
      let index = this.indexes.get(collection);
      if (!index) this.indexes.set(collection, (index = new WatchIndex(collection, this.of(collection))));
      const i = index;
      i.add(route, sub);
      return () => {
        if (i.remove(route, sub)) this.indexes.delete(collection);
      };
    });
  }

  /** Hands a committed batch to each touched collection's subscribers, in order. */
  publish(changes: readonly Change[]): void {
    if (this.subjects.size === 0) return;
    let from = 0;
    while (from < changes.length) {
      const { collection } = splitKey(changes[from].key);
      let to = from + 1;
      // Commit batches are mostly one collection; a mixed one is split into runs, in order.
      while (to < changes.length && changes[to].key.startsWith(collection) && changes[to].key.charCodeAt(collection.length) === SLASH) to++;
      const s = this.subjects.get(collection);
      if (s?.observed) s.next(from === 0 && to === changes.length ? (changes as Change[]) : changes.slice(from, to));
      from = to;
    }
  }

  /** Ends every live watcher with err; the streams go on for watchers to come. */
  fail(err: Error): void {
    const indexes = [...this.indexes.values()];
    this.indexes.clear();
    for (const index of indexes) index.fail(err);
  }

  complete(): void {
    this.closed = true;
    for (const s of this.subjects.values()) s.complete();
  }
}

const SLASH = 0x2f;

type Watcher = Subscriber<Change[]>;

/** The live watchers of one collection, filed by namespace, by one exact label or field term, or scanned. */
class WatchIndex {
  private readonly buckets = new Map<string, Set<Watcher>>();
  private readonly scanned = new Set<Watcher>();
  private namespaced = 0;
  /** Label keys and field paths some watcher is filed under, with how many are. */
  private readonly labelKeys = new Map<string, number>();
  private readonly fields = new Map<string, { get: (o: KubeObject) => string; n: number }>();
  private size = 0;
  private readonly sub: { unsubscribe(): void };

  constructor(
    private readonly collection: string,
    changes: Observable<Change[]>,
  ) {
    this.sub = changes.subscribe({
      next: (batch) => this.deliver(batch),
      complete: () => {
        for (const w of this.all()) w.complete();
      },
    });
  }

  add(route: WatchRoute, w: Watcher): void {
    this.size++;
    if (route.by === 'scan') return void this.scanned.add(w);
    if (route.by === 'namespace') this.namespaced++;
    else if (route.by === 'label') this.labelKeys.set(route.key, (this.labelKeys.get(route.key) ?? 0) + 1);
    else {
      const f = this.fields.get(route.path);
      if (f) f.n++;
      else this.fields.set(route.path, { get: route.get, n: 1 });
    }
    const key = bucketOf(route);
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = new Set()));
    b.add(w);
  }

  /** Takes a watcher out; true when the index is left empty (and has let go of its collection). */
  remove(route: WatchRoute, w: Watcher): boolean {
    const gone = route.by === 'scan' ? this.scanned.delete(w) : this.removeFiled(route, w);
    if (gone) this.size--;
    if (this.size > 0) return false;
    this.sub.unsubscribe();
    return true;
  }

  private removeFiled(route: Exclude<WatchRoute, { by: 'scan' }>, w: Watcher): boolean {
    const key = bucketOf(route);
    const b = this.buckets.get(key);
    if (!b?.delete(w)) return false;
    if (b.size === 0) this.buckets.delete(key);
    if (route.by === 'namespace') this.namespaced--;
    else if (route.by === 'label') {
      const n = this.labelKeys.get(route.key)! - 1;
      if (n === 0) this.labelKeys.delete(route.key);
      else this.labelKeys.set(route.key, n);
    } else {
      const f = this.fields.get(route.path)!;
      if (--f.n === 0) this.fields.delete(route.path);
    }
    return true;
  }

  fail(err: Error): void {
    this.sub.unsubscribe();
    for (const w of [...this.all()]) w.error(err);
  }

  private *all(): IterableIterator<Watcher> {
    yield* this.scanned;
    for (const b of this.buckets.values()) yield* b;
  }

  /**
   * Each watcher that can match a change of the batch gets its changes of the batch as one array, in
   * order. A watcher is filed under one term or scanned, so the watchers of one bucket get the same
   * array, and a broadcast to a thousand watchers builds one.
   */
  private deliver(batch: Change[]): void {
    for (const w of this.scanned) w.next(batch);
    if (this.buckets.size === 0) return;
    const hit = new Map<Set<Watcher>, Change[]>();
    const terms = new Set<string>();
    for (const c of batch) {
      terms.clear();
      if (this.namespaced > 0) terms.add(`n\0${namespaceOf(c.key, this.collection)}`);
      if (this.labelKeys.size > 0 || this.fields.size > 0) {
        this.termsOf(c.cur.obj, terms);
        if (c.prev) this.termsOf(c.prev.obj, terms);
      }
      for (const t of terms) {
        const b = this.buckets.get(t);
        if (!b) continue;
        const got = hit.get(b);
        if (got) got.push(c);
        else hit.set(b, [c]);
      }
    }
    for (const [b, changes] of hit) for (const w of b) w.next(changes);
  }

  private termsOf(o: KubeObject, into: Set<string>): void {
    const labels = o.metadata.labels;
    if (labels) {
      for (const k of this.labelKeys.keys()) {
        const v = labels[k];
        if (v !== undefined) into.add(`l\0${k}=${v}`);
      }
    }
    for (const [path, f] of this.fields) into.add(`f\0${path}=${f.get(o)}`);
  }
}

function bucketOf(route: Exclude<WatchRoute, { by: 'scan' }>): string {
  switch (route.by) {
    case 'namespace':
      return `n\0${route.namespace}`;
    case 'label':
      return `l\0${route.key}=${route.value}`;
    case 'field':
      return `f\0${route.path}=${route.value}`;
  }
}
