import type { KindStrategy, KubeObject } from '../registry/kinds.js';
import type { Change } from '../registry/stored.js';
import type { Logger } from '../observability/logger.js';
import { defer } from 'rxjs/internal/observable/defer';
import { from } from 'rxjs/internal/observable/from';
import { merge } from 'rxjs/internal/observable/merge';
import { mergeMap } from 'rxjs/internal/operators/mergeMap';
import { coalesce, runSerially } from './work-queue.js';
import { rfc3339, type ObjectStore } from '../registry/object-store.js';
import { isRegistryError } from '../registry/errors.js';
import { namespaceConditions, sameConditions, type Remaining } from './namespace-conditions.js';

/** The finalizer this controller owns on every Namespace (a create adds it to spec.finalizers). */
const KUBERNETES = 'kubernetes';

/**
 * Kubernetes' namespace controller: a Namespace being deleted (Terminating, held by the
 * `kubernetes` finalizer) has its namespaced objects deleted, with ordinary deletes in the log; its
 * status conditions say what is left (NamespaceContentRemaining, NamespaceFinalizersRemaining); once
 * nothing is left it removes its finalizer through /finalize, and the namespace goes. It looks again
 * whenever an object of a terminating namespace is deleted or marked, so it waits for the objects'
 * own finalizers without polling. A namespace gone without the finalizer (written before orchd kept
 * it) still has what it held deleted, so nothing is left in a namespace that does not exist.
 */
export function startNamespaceCleanup(objects: ObjectStore, kinds: readonly KindStrategy[], log: Logger): () => void {
  const nsKind = kinds.find((k) => k.group === '' && k.plural === 'namespaces');
  if (!nsKind) return () => {};
  // Asked each time: a CRD's namespaced kind is emptied too.
  const namespaced = () => kinds.filter((k) => k.namespaced);
  const namespaceOf = (name: string) => objects.current(nsKind, undefined, name)?.obj;
  const terminating = (ns: KubeObject | undefined) => !!ns?.metadata.deletionTimestamp && (nsKind.specFinalizers?.(ns) ?? []).includes(KUBERNETES);

  const gone = (err: unknown) => {
    // Deleted or changed meanwhile: the next change of the namespace decides again.
    if (!isRegistryError(err, 'NotFound', 'Conflict')) throw err;
  };

  /** Deletes every object of the namespace not already being deleted; counts what is left. */
  const deleteContent = async (namespace: string): Promise<Remaining> => {
    const remaining: Remaining = { byResource: new Map(), byFinalizer: new Map() };
    for (const kind of namespaced()) {
      for (const s of [...objects.list(kind, namespace)]) {
        if (s.obj.metadata.deletionTimestamp) continue;
        await objects.delete(kind, namespace, s.obj.metadata.name ?? '', { dryRun: false, propagationPolicy: 'Background' }).catch(gone);
      }
      for (const s of objects.list(kind, namespace)) {
        const resource = `${kind.plural}.${kind.group}`;
        remaining.byResource.set(resource, (remaining.byResource.get(resource) ?? 0) + 1);
        for (const f of s.obj.metadata.finalizers ?? []) remaining.byFinalizer.set(f, (remaining.byFinalizer.get(f) ?? 0) + 1);
      }
    }
    return remaining;
  };

  const reconcile = async (name: string) => {
    const ns = namespaceOf(name);
    if (!ns) {
      await deleteContent(name);
      return;
    }
    if (!terminating(ns)) return;
    const remaining = await deleteContent(name);
    const conditions = namespaceConditions(remaining, rfc3339(objects.clock.now()));
    const status = (ns.status ?? {}) as { conditions?: unknown[] };
    if (!sameConditions(status.conditions, conditions)) {
      await objects
        .update(nsKind, undefined, name, (live) => ({ ...live!, status: { ...(live!.status as object), conditions } }), { dryRun: false, subresource: 'status' })
        .catch(gone);
    }
    if (remaining.byResource.size > 0) return;
    await objects
      .update(
        nsKind,
        undefined,
        name,
        (live) => ({ ...live!, spec: { ...(live!.spec as object), finalizers: (nsKind.specFinalizers?.(live!) ?? []).filter((f) => f !== KUBERNETES) } }),
        { dryRun: false, subresource: 'finalize' },
      )
      .catch(gone);
  };

  /** The namespaces a batch of changes asks to look at: one marked or gone, or whose content went or was marked. */
  const toLookAt = (c: Change): string[] => {
    const obj = c.cur.obj;
    if (!obj.metadata.namespace) {
      const isNamespace = c.key === objects.key(nsKind, undefined, obj.metadata.name ?? '');
      return isNamespace && (c.type === 'DELETED' || obj.metadata.deletionTimestamp) ? [obj.metadata.name ?? ''] : [];
    }
    if (c.type !== 'DELETED' && !obj.metadata.deletionTimestamp) return [];
    return terminating(namespaceOf(obj.metadata.namespace)) ? [obj.metadata.namespace] : [];
  };

  /** What a previous run left undone (it stopped mid-cleanup). */
  const leftOver = () => {
    const pending = new Set<string>();
    for (const ns of objects.list(nsKind, undefined)) if (terminating(ns.obj)) pending.add(ns.obj.metadata.name ?? '');
    for (const kind of namespaced()) {
      // Namespace by namespace, not object by object: a million Events in a few namespaces are a few steps.
      for (const ns of objects.namespacesOf(kind)) {
        const owner = namespaceOf(ns);
        if (!owner || owner.metadata.deletionTimestamp) pending.add(ns);
      }
    }
    return pending;
  };

  const namespaces = merge(defer(() => from(leftOver())), objects.changes().pipe(mergeMap((batch) => batch.flatMap(toLookAt)), coalesce()));
  const sub = runSerially('namespace cleanup', log, namespaces, reconcile);
  return () => sub.unsubscribe();
}
