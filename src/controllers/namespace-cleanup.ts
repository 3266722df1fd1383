import type { KindStrategy } from '../resources/strategy.js';
import { collectionOf } from '../store/keys.js';
import type { Change } from '../store/view.js';
import type { Logger } from '../observability/logger.js';
import { serialQueue } from './work-queue.js';
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
  const prefix = `${collectionOf(nsKind)}//`;
  const namespaced = kinds.filter((k) => k.namespaced);

  const enqueue = serialQueue('namespace cleanup', log);

  const gone = (err: unknown) => {
    // Deleted or changed meanwhile: the next change of the namespace decides again.
    if (!isRegistryError(err, 'NotFound', 'Conflict')) throw err;
  };

  const empty = async (namespace: string) => {
    for (const kind of namespaced) {
      for (const s of [...objects.list(kind, namespace)]) {
        await objects.delete(kind, namespace, s.obj.metadata.name ?? '', { dryRun: false, propagationPolicy: 'Background' }).catch(gone);
      }
    }
  };

  const onChange = (c: Change) => {
    if (!c.key.startsWith(prefix)) return;
    const name = c.key.slice(prefix.length);
    if (c.type === 'DELETED') return enqueue(() => empty(name));
    if (!c.cur.obj.metadata.deletionTimestamp || c.prev?.obj.metadata.deletionTimestamp) return;
    enqueue(() => empty(name));
  };

  const sub = objects.store.changes$.subscribe((batch) => {
    for (const c of batch) onChange(c);
  });
  // What a previous run left undone (it stopped mid-cleanup): found off the request path.
  enqueue(async () => {
    const pending = new Set<string>();
    for (const kind of namespaced) {
      // Namespace by namespace, not object by object: a million Events in a few namespaces are a few steps.
      for (const ns of objects.store.namespaces(collectionOf(kind))) {
        const owner = objects.store.get(`${prefix}${ns}`)?.obj;
        if (!owner || owner.metadata.deletionTimestamp) pending.add(ns);
      }
    }
    for (const ns of pending) await empty(ns);
  });
  return () => sub.unsubscribe();
}
