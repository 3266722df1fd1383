import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { Change } from '../registry/reads.js';
import type { Logger } from '../observability/logger.js';
import { defer, from, merge, mergeMap } from 'rxjs';
import { coalesce, runSerially } from './work-queue.js';
import { rfc3339, type Registry } from '../registry/registry.js';
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
export function startNamespaceCleanup(objects: Registry, kinds: readonly KindStrategy[], log: Logger): () => void {
  const nsKind = kinds.find((k) => k.group === '' && k.plural === 'namespaces');
  if (!nsKind) return () => {};
  const cleanup = new NamespaceCleanup(objects, kinds, nsKind);
  const namespaces = merge(
    defer(() => from(cleanup.leftOver())),
    objects.changes().pipe(
      mergeMap((batch) => batch.flatMap((c) => cleanup.toLookAt(c))),
      coalesce(),
    ),
  );
  const sub = runSerially('namespace cleanup', log, namespaces, (ns) => cleanup.reconcile(ns));
  return () => sub.unsubscribe();
}

/** One namespace controller's work over the registry: what to look at, and what to do there. */
class NamespaceCleanup {
  constructor(
    private readonly objects: Registry,
    private readonly kinds: readonly KindStrategy[],
    private readonly nsKind: KindStrategy,
  ) {}

  /** Asked each time: a CRD's namespaced kind is emptied too. */
  private namespaced(): KindStrategy[] {
    return this.kinds.filter((k) => k.namespaced);
  }

  private namespaceOf(name: string): KubeObject | undefined {
    return this.objects.current(this.nsKind, undefined, name)?.obj;
  }

  private terminating(ns: KubeObject | undefined): boolean {
    return !!ns?.metadata.deletionTimestamp && (this.nsKind.specFinalizers?.(ns) ?? []).includes(KUBERNETES);
  }

  async reconcile(name: string): Promise<void> {
    const ns = this.namespaceOf(name);
    if (!ns) {
      await this.deleteContent(name);
      return;
    }
    if (!this.terminating(ns)) return;
    const remaining = await this.deleteContent(name);
    const conditions = namespaceConditions(remaining, rfc3339(this.objects.clock.now()));
    if (!sameConditions((ns.status as { conditions?: unknown[] } | undefined)?.conditions, conditions)) {
      const withConditions = (live: KubeObject | undefined) => ({ ...live!, status: { ...(live!.status as object), conditions } });
      await this.objects.update(this.nsKind, undefined, name, withConditions, { dryRun: false, subresource: 'status' }).catch(gone);
    }
    if (remaining.byResource.size > 0) return;
    // Empty: its finalizer goes (through /finalize), and with the last one the namespace.
    const finalized = (live: KubeObject | undefined) => ({ ...live!, spec: { ...(live!.spec as object), finalizers: (this.nsKind.specFinalizers?.(live!) ?? []).filter((f) => f !== KUBERNETES) } });
    await this.objects.update(this.nsKind, undefined, name, finalized, { dryRun: false, subresource: 'finalize' }).catch(gone);
  }

  /** Deletes every object of the namespace not already being deleted; counts what is left. */
  private async deleteContent(namespace: string): Promise<Remaining> {
    const remaining: Remaining = { byResource: new Map(), byFinalizer: new Map() };
    for (const kind of this.namespaced()) {
      for (const s of [...this.objects.list(kind, namespace)]) {
        if (s.obj.metadata.deletionTimestamp) continue;
        await this.objects.delete(kind, namespace, s.obj.metadata.name ?? '', { dryRun: false, propagationPolicy: 'Background' }).catch(gone);
      }
      for (const s of this.objects.list(kind, namespace)) {
        const resource = `${kind.plural}.${kind.group}`;
        remaining.byResource.set(resource, (remaining.byResource.get(resource) ?? 0) + 1);
        for (const f of s.obj.metadata.finalizers ?? []) remaining.byFinalizer.set(f, (remaining.byFinalizer.get(f) ?? 0) + 1);
      }
    }
    return remaining;
  }

  /** The namespaces a change asks to look at: one marked or gone, or whose content went or was marked. */
  toLookAt(c: Change): string[] {
    const obj = c.cur.obj;
    if (!obj.metadata.namespace) {
      const isNamespace = c.key === this.objects.key(this.nsKind, undefined, obj.metadata.name ?? '');
      return isNamespace && (c.type === 'DELETED' || obj.metadata.deletionTimestamp) ? [obj.metadata.name ?? ''] : [];
    }
    if (c.type !== 'DELETED' && !obj.metadata.deletionTimestamp) return [];
    return this.terminating(this.namespaceOf(obj.metadata.namespace)) ? [obj.metadata.namespace] : [];
  }

  /** What a previous run left undone (it stopped mid-cleanup). */
  leftOver(): Set<string> {
    const pending = new Set<string>();
    for (const ns of this.objects.list(this.nsKind, undefined)) {
      // Only a namespace whose bytes name a deletionTimestamp is decoded: a start leaves the rest as bytes.
      const bytes = this.objects.undecodedBytes(ns);
      if ((bytes === undefined || bytes.includes('deletionTimestamp')) && this.terminating(ns.obj)) pending.add(ns.obj.metadata.name ?? '');
    }
    for (const kind of this.namespaced()) {
      // Namespace by namespace, not object by object: a million Events in a few namespaces are a few steps.
      for (const ns of this.objects.namespacesOf(kind)) {
        const owner = this.namespaceOf(ns);
        if (!owner || owner.metadata.deletionTimestamp) pending.add(ns);
      }
    }
    return pending;
  }
}

/** Deleted or changed meanwhile: the next change of the namespace decides again. */
const gone = (err: unknown) => {
  if (!isRegistryError(err, 'NotFound', 'Conflict')) throw err;
};
