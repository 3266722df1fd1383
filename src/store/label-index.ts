import { SortedKeys } from './sorted-keys.js';

type Labels = Readonly<Record<string, string>> | undefined;

/**
 * Which objects of a collection carry a label value: collection → label key → value → the
 * in-collection keys, in order. A selector with an equality or `in` term walks only those keys,
 * so a list selecting 1% of a collection costs 1% of its keys, and pages still come in key order.
 *
 * Built for a collection the first time a selector asks for it (so neither startup nor the
 * checkpoint pays for it), then kept up to date by every applied change.
 */
export class LabelIndex {
  private readonly byCollection = new Map<string, Map<string, Map<string, SortedKeys>>>();

  has(collection: string): boolean {
    return this.byCollection.has(collection);
  }

  /** Indexes a collection from its current objects. */
  build(collection: string, objects: Iterable<[suffix: string, labels: Labels]>): void {
    const byKey = new Map<string, Map<string, string[]>>();
    for (const [suffix, labels] of objects) {
      if (!labels) continue;
      for (const [k, v] of Object.entries(labels)) {
        let byValue = byKey.get(k);
        if (!byValue) byKey.set(k, (byValue = new Map()));
        const list = byValue.get(v);
        if (list) list.push(suffix);
        else byValue.set(v, [suffix]);
      }
    }
    const index = new Map<string, Map<string, SortedKeys>>();
    for (const [k, byValue] of byKey) {
      const m = new Map<string, SortedKeys>();
      for (const [v, list] of byValue) m.set(v, SortedKeys.of(list));
      index.set(k, m);
    }
    this.byCollection.set(collection, index);
  }

  /** One object's labels changed (prev undefined: created; cur undefined: deleted). */
  update(collection: string, suffix: string, prev: Labels, cur: Labels): void {
    const index = this.byCollection.get(collection);
    if (!index) return;
    if (prev) {
      for (const [k, v] of Object.entries(prev)) {
        if (cur && Object.prototype.hasOwnProperty.call(cur, k) && cur[k] === v) continue;
        const byValue = index.get(k);
        const keys = byValue?.get(v);
        if (!keys) continue;
        keys.delete(suffix);
        if (keys.size === 0) {
          byValue!.delete(v);
          if (byValue!.size === 0) index.delete(k);
        }
      }
    }
    if (cur) {
      for (const [k, v] of Object.entries(cur)) {
        if (prev && Object.prototype.hasOwnProperty.call(prev, k) && prev[k] === v) continue;
        let byValue = index.get(k);
        if (!byValue) index.set(k, (byValue = new Map()));
        let keys = byValue.get(v);
        if (!keys) byValue.set(v, (keys = new SortedKeys()));
        keys.add(suffix);
      }
    }
  }

  /** The keys holding label key = value (undefined when none). */
  keys(collection: string, key: string, value: string): SortedKeys | undefined {
    return this.byCollection.get(collection)?.get(key)?.get(value);
  }
}

/** Merges sorted key streams (one per value of an `in` term) into one sorted stream; a key carries one value per label, so no duplicates. */
export function* mergeSorted(streams: Iterator<string>[]): IterableIterator<string> {
  const heads: { it: Iterator<string>; v: string }[] = [];
  for (const it of streams) {
    const r = it.next();
    if (!r.done) heads.push({ it, v: r.value });
  }
  while (heads.length > 0) {
    let min = 0;
    for (let i = 1; i < heads.length; i++) if (heads[i].v < heads[min].v) min = i;
    const h = heads[min];
    yield h.v;
    const r = h.it.next();
    if (r.done) heads.splice(min, 1);
    else h.v = r.value;
  }
}
