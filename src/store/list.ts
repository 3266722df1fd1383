import { LogError } from '../log/log.js';
import type { KubeObject } from '../resources/types.js';
import type { Store } from './store.js';
import type { StoredObject } from './view.js';

export interface ListQuery {
  collection: string;
  /** In-collection key prefix: '' for all, 'ns/' for one namespace. */
  prefix: string;
  matches?: (obj: KubeObject) => boolean;
  limit?: number;
  /** Resume after this in-collection key (from a continue token). */
  after?: string;
  /** Read the state as of this version (Exact, or a continued snapshot); undefined = the current view. */
  atSeq?: number;
}

export interface ListResult {
  items: StoredObject[];
  /** The version the items are consistent at: the list's resourceVersion. */
  seq: number;
  /** Set when more keys remain after the last one returned: where the next page starts. */
  next?: string;
  /** Keys left after this page, when it can be known without reading them (no selector). */
  remaining?: number;
}

/**
 * A page of a collection, from the current view or at a past version. A past version walks every key
 * the collection ever had and asks the key index which revision held it then: objects unchanged since
 * come from the view, older revisions are read from the log by sequence number.
 */
export async function listObjects(store: Store, q: ListQuery): Promise<ListResult> {
  const limit = q.limit && q.limit > 0 ? q.limit : Infinity;
  const items: StoredObject[] = [];
  const seq = q.atSeq ?? store.appliedSeq;
  const current = q.atSeq === undefined || q.atSeq >= store.appliedSeq;
  if (!current && q.atSeq! < store.log.firstSeq - 1) throw new LogError('COMPACTED', `version ${q.atSeq} is compacted`, q.atSeq);
  const keys = current ? store.view.collections.get(q.collection) : store.view.history.get(q.collection);
  if (!keys) return { items, seq };
  let last: string | undefined;
  for (const suffix of keys.range(q.prefix, q.after)) {
    if (items.length >= limit) {
      const remaining = q.matches ? undefined : keys.countRange(q.prefix, last);
      return remaining !== undefined && current ? { items, seq, next: last, remaining } : { items, seq, next: last };
    }
    last = suffix;
    const key = `${q.collection}/${suffix}`;
    const s = current ? store.view.objects.get(key) : await at(store, key, seq);
    if (s && (!q.matches || q.matches(s.obj))) items.push(s);
  }
  return { items, seq };
}

async function at(store: Store, key: string, seq: number): Promise<StoredObject | undefined> {
  const rev = store.view.keyIndex.at(key, seq);
  if (rev === undefined) return undefined;
  const cur = store.view.objects.get(key);
  if (cur && cur.seq === rev) return cur;
  const e = await store.log.get(rev);
  if (!e) throw new LogError('COMPACTED', `revision ${rev} of ${key} is compacted`, rev);
  return { key, seq: rev, obj: e.value as KubeObject };
}

/** One object as of a version (Exact get), or undefined if it did not exist then. */
export function getAt(store: Store, key: string, seq: number): Promise<StoredObject | undefined> {
  if (seq < store.log.firstSeq - 1) throw new LogError('COMPACTED', `version ${seq} is compacted`, seq);
  return at(store, key, seq);
}
