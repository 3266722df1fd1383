import type { KindStrategy } from '../registry/kinds.js';
import type { Change } from '../registry/stored.js';
import type { Logger } from '../observability/logger.js';
import { defer } from 'rxjs/internal/observable/defer';
import { from } from 'rxjs/internal/observable/from';
import { merge } from 'rxjs/internal/observable/merge';
import { mergeMap } from 'rxjs/internal/operators/mergeMap';
import { runSerially } from './work-queue.js';
import type { ObjectStore } from '../registry/object-store.js';
import { isRegistryError } from '../registry/errors.js';

/**
 * What Kubernetes' namespace controller does for orchd's kinds: a Namespace being deleted (marked,
 * while finalizers hold it; Terminating) or gone has its namespaced objects deleted, with ordinary
 * deletes in the log, so that nothing is left in a namespace that does not exist. Like the garbage
 * collector, it follows the committed changes.
 */
export function startNamespaceCleanup(objects: ObjectStore, kinds: readonly KindStrategy[], log: Logger): () => void {
  const nsKind = kinds.find((k) => k.group === '' && k.plural === 'namespaces');
  if (!nsKind) return () => {};
  // Asked each time: a CRD's namespaced kind is emptied too.
  const namespaced = () => kinds.filter((k) => k.namespaced);

  const gone = (err: unknown) => {
    // Deleted or changed meanwhile: the next change of the namespace decides again.
    if (!isRegistryError(err, 'NotFound', 'Conflict')) throw err;
  };

  const empty = async (namespace: string) => {
    for (const kind of namespaced()) {
      for (const s of [...objects.list(kind, namespace)]) {
        await objects.delete(kind, namespace, s.obj.metadata.name ?? '', { dryRun: false, propagationPolicy: 'Background' }).catch(gone);
      }
    }
  };

  /** The namespace a change asks to be emptied: one marked for deletion just now, or gone. */
  const toEmpty = (c: Change): string[] => {
    if (c.type !== 'DELETED' && (!c.cur.obj.metadata.deletionTimestamp || c.prev?.obj.metadata.deletionTimestamp)) return [];
    return [c.cur.obj.metadata.name ?? ''];
  };

  /** What a previous run left undone (it stopped mid-cleanup). */
  const leftOver = () => {
    const pending = new Set<string>();
    for (const kind of namespaced()) {
      // Namespace by namespace, not object by object: a million Events in a few namespaces are a few steps.
      for (const ns of objects.namespacesOf(kind)) {
        const owner = objects.current(nsKind, undefined, ns)?.obj;
        if (!owner || owner.metadata.deletionTimestamp) pending.add(ns);
      }
    }
    return pending;
  };

  const namespaces = merge(
    defer(() => from(leftOver())),
    objects.changes(nsKind).pipe(mergeMap((batch) => batch.flatMap(toEmpty))),
  );
  const sub = runSerially('namespace cleanup', log, namespaces, empty);
  return () => sub.unsubscribe();
}
