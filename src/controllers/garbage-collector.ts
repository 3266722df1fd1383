import type { KindStrategy } from '../api/strategy.js';
import { perList } from '../api/kind-revisions.js';
import type { KubeObject, OwnerReference } from '../api/types.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Change, ObjectReads, StoredObject } from '../registry/reads.js';
import { collectionOf, splitKey } from '../api/object-keys.js';
import type { Logger } from '../observability/logger.js';
import { catchError, delayWhen, EMPTY, endWith, from, ignoreElements, mergeMap, shareReplay, Subscription } from 'rxjs';
import { runSerially } from './work-queue.js';
import type { Registry } from '../registry/registry.js';
import { cloneJson } from '../api/json-access.js';

/** Who owns whom, among the objects that name owners: dependents by owner uid, owner uids by dependent. */
class OwnerIndex {
  private readonly dependents = new Map<string, Set<string>>();
  private readonly ownersOf = new Map<string, string[]>();

  /** How many owners have dependents. */
  get owners(): number {
    return this.dependents.size;
  }

  /** Indexes key as holding obj now (undefined: gone, or names no owner). */
  set(key: string, obj: KubeObject | undefined): void {
    for (const uid of this.ownersOf.get(key) ?? []) this.dependents.get(uid)?.delete(key);
    this.ownersOf.delete(key);
    if (!obj) return;
    const uids = (obj.metadata.ownerReferences ?? []).map((r) => r.uid);
    if (uids.length === 0) return;
    this.ownersOf.set(key, uids);
    for (const uid of uids) {
      let set = this.dependents.get(uid);
      if (!set) this.dependents.set(uid, (set = new Set()));
      set.add(key);
    }
  }

  /** The keys of the dependents of an owner uid. */
  of(uid: string): string[] {
    return [...(this.dependents.get(uid) ?? [])];
  }
}

type Job = () => Promise<void>;

/**
 * The garbage collector for ownerReferences, as Kubernetes' runs beside its API server:
 * - an owner deleted outright (Background) takes its dependents with it once no owner remains;
 * - `orphan` finalizer: dependents lose their reference to the owner, then the finalizer goes;
 * - `foregroundDeletion` finalizer: dependents are deleted first, then the finalizer goes.
 * It follows the store's committed changes, so it sees what every replica of the log sees.
 *
 * Its index holds the objects that have owners (dependents by owner uid); an owner is found from a
 * reference by its kind, name and the dependent's namespace, as Kubernetes' references name it, and
 * must still have the referenced uid. The index is built after the server is ready, a slice at a time
 * off the request path: objects restored from the log are bytes, and only those whose bytes hold
 * "ownerReferences" are decoded for a look (decoding all of a million, and a map of every uid, cost
 * seconds of CPU and 800 MB after every start). Changes committed meanwhile wait, in order, and are
 * handled once the index is whole.
 */
export class GarbageCollector {
  private readonly index = new OwnerIndex();
  // Built again when the list changes: a CRD's kind comes and goes while the server runs.
  private readonly lookups: () => { byCollection: Map<string, KindStrategy>; byGroupKind: Map<string, KindStrategy> };

  constructor(
    private readonly objects: Registry,
    kinds: readonly KindStrategy[],
    private readonly log: Logger,
  ) {
    this.lookups = perList(kinds, () => ({
      byCollection: new Map(kinds.map((k) => [collectionOf(k), k])),
      byGroupKind: new Map(kinds.map((k) => [`${k.group}/${k.kind}`, k])),
    }));
  }

  /** Indexes what is stored now, then follows the changes; returns its stop. */
  start(): () => void {
    const index = (key: string, obj: KubeObject | undefined) => this.index.set(key, obj);
    // The keys as of now, taken synchronously with subscribing to the changes below: every later
    // change waits (delayWhen) until the index of these is whole, and is then handled in order.
    const indexed = from(indexInSlices(this.objects, this.objects.everyKey(), index)).pipe(
      ignoreElements(),
      catchError((err: unknown) => {
        this.log.warn('garbage collector: indexing', { error: String(err) });
        return EMPTY;
      }),
      endWith(true),
      shareReplay({ bufferSize: 1, refCount: true }),
    );
    const subs = new Subscription();
    subs.add(indexed.subscribe());
    const work = this.objects.changes().pipe(
      delayWhen(() => indexed),
      // Indexed as each change comes, in order; its jobs run one at a time after those before.
      // A change that names no owner, is no deletion in progress and (deleted) leaves no dependents
      // behind asks nothing of the collector: it is not decoded (most creates: 0.04 ms each on etcd,
      // where every change arrives as bytes; bench/RESULTS.md 36).
      mergeMap((batch) => batch.flatMap((c) => (asksNothing(this.objects, c, this.index.owners) ? (index(c.key, undefined), []) : [...this.forOwner(c), ...this.forDependent(c)]))),
    );
    subs.add(runSerially('garbage collector', this.log, work, (job) => job()));
    return () => subs.unsubscribe();
  }

  /** What a change asks of the dependents of the object it changed (indexed first). */
  private forOwner(c: Change): Job[] {
    const obj = c.cur.obj;
    const uid = obj.metadata.uid;
    this.index.set(c.key, c.type === 'DELETED' ? undefined : obj);
    if (!uid) return [];
    const deps = this.index.of(uid);
    if (c.type === 'DELETED') return deps.map((d) => () => this.deleteDependent(d, 'Background'));
    if (!obj.metadata.deletionTimestamp) return [];
    const fin = obj.metadata.finalizers ?? [];
    if (fin.includes('orphan')) {
      return [
        async () => {
          for (const d of deps) await this.dropOwnerRef(d, uid);
          await this.removeFinalizer(c.key, 'orphan');
        },
      ];
    }
    if (!fin.includes('foregroundDeletion')) return [];
    if (deps.length === 0) return [() => this.removeFinalizer(c.key, 'foregroundDeletion')];
    return deps.map((d) => () => this.deleteDependent(d, 'Foreground'));
  }

  /** A dependent that goes may unblock its foreground-deleting owner. */
  private forDependent(c: Change): Job[] {
    if (c.type !== 'DELETED') return [];
    return (c.cur.obj.metadata.ownerReferences ?? []).flatMap((r) => {
      const owner = this.ownerOf(r, c.key);
      if (!owner?.obj.metadata.finalizers?.includes('foregroundDeletion') || this.index.of(r.uid).length > 0) return [];
      return [() => this.removeFinalizer(owner.key, 'foregroundDeletion')];
    });
  }

  /** The owner a dependent's reference names, while it exists with the referenced uid. */
  private ownerOf(ref: OwnerReference, dependentKey: string): { key: string; obj: KubeObject } | undefined {
    const slash = ref.apiVersion.indexOf('/');
    const kind = this.lookups().byGroupKind.get(`${slash < 0 ? '' : ref.apiVersion.slice(0, slash)}/${ref.kind}`);
    if (!kind) return undefined;
    // A namespaced owner is in its dependent's namespace; a cluster-scoped one in none.
    const { suffix } = splitKey(dependentKey);
    const key = this.objects.key(kind, suffix.slice(0, suffix.indexOf('/')), ref.name);
    const obj = this.objects.currentAt(key)?.obj;
    return obj && obj.metadata.uid === ref.uid ? { key, obj } : undefined;
  }

  private target(key: string): { kind: KindStrategy; obj: KubeObject } | undefined {
    const kind = this.lookups().byCollection.get(splitKey(key).collection);
    const s = this.objects.currentAt(key);
    return kind && s ? { kind, obj: s.obj } : undefined;
  }

  private async dropOwnerRef(depKey: string, ownerUid: string): Promise<void> {
    const t = this.target(depKey);
    if (!t) return;
    const next = cloneJson(t.obj);
    next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
    if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
    await this.objects.update(t.kind, next.metadata.namespace, next.metadata.name ?? '', next, { dryRun: false });
  }

  private async removeFinalizer(key: string, finalizer: string): Promise<void> {
    const t = this.target(key);
    if (!t || !t.obj.metadata.finalizers?.includes(finalizer)) return;
    const next = cloneJson(t.obj);
    next.metadata.finalizers = next.metadata.finalizers!.filter((f) => f !== finalizer);
    await this.objects.update(t.kind, next.metadata.namespace, next.metadata.name ?? '', next, { dryRun: false });
  }

  private async deleteDependent(depKey: string, policy: 'Background' | 'Foreground'): Promise<void> {
    const t = this.target(depKey);
    if (!t) return;
    // Only when no owner is left does a dependent go; otherwise it just loses the dangling reference.
    const alive = (t.obj.metadata.ownerReferences ?? []).filter((r) => {
      const o = this.ownerOf(r, depKey)?.obj;
      return o && !o.metadata.deletionTimestamp;
    });
    if (alive.length > 0) return;
    await this.objects.delete(t.kind, t.obj.metadata.namespace, t.obj.metadata.name ?? '', { dryRun: false, propagationPolicy: policy }).catch(() => undefined);
  }
}

/** Starts a garbage collector on the registry; returns its stop. */
export function startGarbageCollector(objects: Registry, kinds: readonly KindStrategy[], log: Logger): () => void {
  return new GarbageCollector(objects, kinds, log).start();
}

/**
 * Indexes the objects of a snapshot that may have owners, yielding between slices of SLICE_MS so
 * requests go through meanwhile; its consumer stops it between slices.
 */
async function* indexInSlices(reads: Reads, snapshot: Iterator<StoredObject>, index: (key: string, obj: KubeObject) => void): AsyncGenerator<void> {
  for (let done = false; !done;) {
    for (let i = 0, until = performance.now() + SLICE_MS; i % 64 !== 0 || performance.now() < until; i++) {
      // The current state of each key: a change that waits re-indexes its key again, in order.
      const r = snapshot.next();
      if ((done = r.done === true)) break;
      if (mayHaveOwners(reads, r.value)) index(r.value.key, reads.peek(r.value));
    }
    await nextTurn();
    yield;
  }
}

/** How the collector looks at objects it scans without keeping them decoded. */
type Reads = Pick<ObjectReads, 'peek' | 'undecodedBytes'>;

/** How long one turn of the event loop indexes before it lets requests through. */
const SLICE_MS = 1;

const OWNER_REFERENCES = Buffer.from('ownerReferences');
const DELETION_TIMESTAMP = Buffer.from('deletionTimestamp');

/**
 * Whether a change is sure to ask nothing of the collector: its object names no owner and is not
 * being deleted, and a delete (whose dependents are found by its uid) comes while nothing has
 * owners. Read from the bytes while they are bytes (a name in a value only costs a decode).
 */
const asksNothing = (reads: Reads, c: Change, owners: number): boolean => {
  if (c.type === 'DELETED' && owners > 0) return false;
  const raw = reads.undecodedBytes(c.cur);
  if (raw) return raw.indexOf(OWNER_REFERENCES) === -1 && raw.indexOf(DELETION_TIMESTAMP) === -1;
  const m = c.cur.obj.metadata;
  return !m.ownerReferences?.length && !m.deletionTimestamp;
};

/** Whether an object may name owners: a look at its bytes when it is still bytes (a native scan), not a decode. */
const mayHaveOwners = (reads: Reads, s: StoredObject): boolean => {
  const raw = reads.undecodedBytes(s);
  return raw ? raw.indexOf(OWNER_REFERENCES) !== -1 : (s.obj.metadata.ownerReferences?.length ?? 0) > 0;
};
