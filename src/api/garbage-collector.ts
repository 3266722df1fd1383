import type { KindStrategy } from '../resources/strategy.js';
import type { KubeObject } from '../resources/types.js';
import { splitKey } from '../store/keys.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { peekObject, type Change } from '../store/view.js';
import type { Logger } from './logger.js';
import { serialQueue } from './work-queue.js';
import type { ObjectStore } from './object-store.js';
import { cloneJson } from '../resources/json-access.js';

/**
 * The garbage collector for ownerReferences, as Kubernetes' runs beside its API server:
 * - an owner deleted outright (Background) takes its dependents with it once no owner remains;
 * - `orphan` finalizer: dependents lose their reference to the owner, then the finalizer goes;
 * - `foregroundDeletion` finalizer: dependents are deleted first, then the finalizer goes.
 * It follows the store's committed changes, so it sees what every replica of the log sees.
 *
 * Its index of every object's uid and owners is built after the server is ready, a slice at a time
 * off the request path, without keeping decoded objects in the view (a view restored from the log
 * holds them as bytes; decoding a million of them up front held /readyz back by seconds). Changes
 * committed meanwhile wait, in order, and are handled once the index is whole.
 */
export function startGarbageCollector(objects: ObjectStore, kindOfCollection: (collection: string) => KindStrategy | undefined, log: Logger): () => void {
  const keyByUid = new Map<string, string>();
  const dependents = new Map<string, Set<string>>(); // owner uid → dependent keys
  const ownersOf = new Map<string, string[]>(); // dependent key → owner uids

  const index = (key: string, obj: KubeObject | undefined) => {
    for (const uid of ownersOf.get(key) ?? []) dependents.get(uid)?.delete(key);
    ownersOf.delete(key);
    if (!obj) return;
    if (obj.metadata.uid) keyByUid.set(obj.metadata.uid, key);
    const uids = (obj.metadata.ownerReferences ?? []).map((r) => r.uid);
    if (uids.length === 0) return;
    ownersOf.set(key, uids);
    for (const uid of uids) {
      let set = dependents.get(uid);
      if (!set) dependents.set(uid, (set = new Set()));
      set.add(key);
    }
  };
  let waiting: Change[] | undefined = [];
  let stopped = false;
  // The keys as of now, synchronously with subscribing below: every later change is in waiting.
  const keys = Array.from(objects.store.view.objects(), (s) => s.key);

  const enqueue = serialQueue('garbage collector', log);

  const target = (key: string) => {
    const kind = kindOfCollection(splitKey(key).collection);
    const s = objects.store.get(key);
    return kind && s ? { kind, obj: s.obj } : undefined;
  };

  const dropOwnerRef = async (depKey: string, ownerUid: string) => {
    const t = target(depKey);
    if (!t) return;
    const next = cloneJson(t.obj);
    next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
    if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
    await objects.update(t.kind, next.metadata.namespace, next.metadata.name ?? '', next, { dryRun: false });
  };

  const removeFinalizer = async (key: string, finalizer: string) => {
    const t = target(key);
    if (!t || !t.obj.metadata.finalizers?.includes(finalizer)) return;
    const next = cloneJson(t.obj);
    next.metadata.finalizers = next.metadata.finalizers!.filter((f) => f !== finalizer);
    await objects.update(t.kind, next.metadata.namespace, next.metadata.name ?? '', next, { dryRun: false });
  };

  const deleteDependent = async (depKey: string, policy: 'Background' | 'Foreground') => {
    const t = target(depKey);
    if (!t) return;
    // Only when no owner is left does a dependent go; otherwise it just loses the dangling reference.
    const alive = (t.obj.metadata.ownerReferences ?? []).filter((r) => {
      const k = keyByUid.get(r.uid);
      const o = k ? objects.store.get(k)?.obj : undefined;
      return o && !o.metadata.deletionTimestamp;
    });
    if (alive.length > 0) return;
    await objects.delete(t.kind, t.obj.metadata.namespace, t.obj.metadata.name ?? '', { dryRun: false, propagationPolicy: policy }).catch(() => undefined);
  };

  const onChange = (c: Change) => {
    const obj = c.cur.obj;
    const uid = obj.metadata.uid;
    index(c.key, c.type === 'DELETED' ? undefined : obj);
    if (!uid) return;
    const deps = [...(dependents.get(uid) ?? [])];
    if (c.type === 'DELETED') {
      keyByUid.delete(uid);
      for (const d of deps) enqueue(() => deleteDependent(d, 'Background'));
      return;
    }
    if (!obj.metadata.deletionTimestamp) return;
    const fin = obj.metadata.finalizers ?? [];
    if (fin.includes('orphan')) {
      enqueue(async () => {
        for (const d of deps) await dropOwnerRef(d, uid);
        await removeFinalizer(c.key, 'orphan');
      });
    } else if (fin.includes('foregroundDeletion')) {
      if (deps.length === 0) enqueue(() => removeFinalizer(c.key, 'foregroundDeletion'));
      else for (const d of deps) enqueue(() => deleteDependent(d, 'Foreground'));
    }
  };

  // A dependent that goes may unblock its foreground-deleting owner.
  const onDependentGone = (c: Change) => {
    if (c.type !== 'DELETED') return;
    for (const r of c.cur.obj.metadata.ownerReferences ?? []) {
      const ownerKey = keyByUid.get(r.uid);
      const owner = ownerKey ? objects.store.get(ownerKey)?.obj : undefined;
      if (ownerKey && owner?.metadata.finalizers?.includes('foregroundDeletion') && (dependents.get(r.uid)?.size ?? 0) === 0) {
        enqueue(() => removeFinalizer(ownerKey, 'foregroundDeletion'));
      }
    }
  };

  const handle = (c: Change) => {
    onChange(c);
    onDependentGone(c);
  };

  const sub = objects.store.changes$.subscribe((batch) => {
    if (waiting) waiting.push(...batch);
    else for (const c of batch) handle(c);
  });

  void (async () => {
    for (let i = 0; i < keys.length && !stopped; i += INDEX_SLICE) {
      // The current state of each key: a change that waits re-indexes its key again, in order.
      for (const key of keys.slice(i, i + INDEX_SLICE)) {
        const s = objects.store.get(key);
        if (s) index(key, peekObject(s));
      }
      await nextTurn();
    }
    const held = waiting ?? [];
    waiting = undefined;
    if (!stopped) for (const c of held) handle(c);
  })().catch((err: unknown) => log.warn('garbage collector', { error: String(err) }));

  return () => {
    stopped = true;
    sub.unsubscribe();
  };
}

/**
 * Objects indexed per turn of the event loop while the index is built: each is decoded for a look,
 * ~5 µs, so a turn stays near a millisecond (2000 a turn held list pages for 50-150 ms at 100k Events).
 */
const INDEX_SLICE = 250;
