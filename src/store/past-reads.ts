/**
 * What a test asks of the log through startOrchd: every version of one object, and every object at
 * a version. Both come from the log through the key index, as Exact reads and watches do.
 */
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { collectionOf, storageKey, suffixOf } from '../api/object-keys.js';
import { listObjects } from './list.js';
import type { Store } from './store.js';

/** One version of an object: the write that made it and the object as it was written. */
export interface HistoryEntry<T = KubeObject> {
  /** ADDED for a create (also the oldest version compaction kept), DELETED for the delete's record. */
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  resourceVersion: string;
  /** As written; for DELETED, the object's last state. */
  object: T;
  /** Who wrote this version, as `orchd log` shows it: the authenticated user (system:apiserver for the server's own controllers). */
  user?: string;
  /** The write's verb: create, update, patch, delete. */
  verb?: string;
  /** The subresource written (status), if any. */
  subresource?: string;
  /** The request's field manager (fieldManager, else its User-Agent), if it named one. */
  fieldManager?: string;
  /** When the write committed (RFC 3339, milliseconds). */
  committedAt?: string;
}

/** Which objects state() gives: those of one kind, of one namespace, or both. */
export interface StateFilter {
  kind?: KindStrategy;
  namespace?: string;
}

/** Every version of one object still in the log (compaction and reset() drop older ones), oldest first. */
export async function historyOf(store: Store, kind: KindStrategy, namespace: string | undefined, name: string): Promise<HistoryEntry[]> {
  if (kind.namespaced && !namespace) throw new Error(`${kind.plural} are namespaced: give a namespace`);
  const ns = kind.namespaced ? namespace! : '';
  const revisions = store.view.slotsOf(collectionOf(kind))?.get(suffixOf(ns, name))?.list() ?? [];
  const key = storageKey(kind, ns, name);
  const out: HistoryEntry[] = [];
  let previous = -1;
  for (const rev of revisions) {
    const { stored, time, writer } = await store.revisionEntry(key, Math.abs(rev));
    out.push({
      type: rev < 0 ? 'DELETED' : previous < 0 ? 'ADDED' : 'MODIFIED',
      resourceVersion: String(Math.abs(rev)),
      object: structuredClone(stored.obj),
      ...(writer ? { user: writer.user } : {}),
      ...(writer?.verb ? { verb: writer.verb } : {}),
      ...(writer?.subresource ? { subresource: writer.subresource } : {}),
      ...(writer?.manager ? { fieldManager: writer.manager } : {}),
      ...(time !== undefined ? { committedAt: new Date(time).toISOString() } : {}),
    });
    previous = rev;
  }
  return out;
}

/**
 * Every object at version seq (the current state when undefined), collection by collection in key
 * order: what a list with resourceVersionMatch=Exact of each resource would answer.
 */
export async function stateAt(store: Store, seq?: number, filter: StateFilter = {}): Promise<KubeObject[]> {
  // One version for every collection: writes that land between two of them are not seen.
  const atSeq = seq ?? store.appliedSeq;
  const { kind, namespace } = filter;
  const collections = kind ? [collectionOf(kind)] : [...store.view.history.keys()].sort();
  // A cluster-scoped kind has no namespaces: a namespace given with it selects nothing out.
  const prefix = kind?.namespaced && namespace !== undefined ? `${namespace}/` : '';
  const out: KubeObject[] = [];
  for (const collection of collections) {
    const page = await listObjects(store, { collection, prefix, atSeq });
    for (const s of page.items) if (kind || namespace === undefined || s.obj.metadata.namespace === namespace) out.push(structuredClone(s.obj));
  }
  return out;
}
