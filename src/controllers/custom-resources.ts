/**
 * What kube-apiserver's apiextensions controllers do for CustomResourceDefinitions, as a client of
 * the registry like the other controllers:
 *
 * - naming: a CRD's names are accepted unless another CRD, or a built-in kind, of its group holds
 *   them (NamesAccepted, with PluralConflict or KindConflict when not);
 * - establishing: a CRD whose names are accepted is served, its kind defined in the server's
 *   KindCatalog, then marked Established; a changed CRD is served as it now is;
 * - finalizing: a deleted CRD (held by its cleanup finalizer, Terminating) refuses creates, has its
 *   objects deleted, then lets go, and its kind is no longer served.
 *
 * The registry follows the store's committed changes as they are applied, in the same turn: a CRD's
 * kind is served before the create of the CRD is answered, and gone when its delete (or a reset) is
 * applied, so nothing asks for a kind that half exists. The status writes follow, one CRD at a time.
 */
import { defer, from, merge, mergeMap, Subject } from 'rxjs';
import type { Subscription } from 'rxjs';
import { CRD_CLEANUP_FINALIZER, type CrdCondition, type CustomNames, type ServedKinds } from '../api/served-kinds.js';
import { isObject, listAt, objectAt, stringAt } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { collectionOf } from '../api/object-keys.js';
import type { Change } from '../registry/reads.js';
import type { Logger } from '../observability/logger.js';
import { isRegistryError } from '../registry/errors.js';
import type { Registry } from '../registry/registry.js';
import { rfc3339 } from '../registry/registry.js';
import { coalesce, runSerially } from './work-queue.js';

interface Served {
  group: string;
  names: CustomNames;
}

const TERMINATING_CREATE = 'create not allowed while custom resource definition is terminating';

export function startCustomResources(objects: Registry, registry: ServedKinds, log: Logger): () => void {
  const crdKind = registry.find('apiextensions.orch.io', 'customresourcedefinitions');
  if (!crdKind) return () => {};
  return new CustomResources(objects, registry, crdKind, log).start();
}

class CustomResources {
  private readonly prefix: string;
  /** The CRDs whose names are accepted (so whose kinds are served), by CRD name. */
  private readonly accepted = new Map<string, Served>();
  /** CRDs whose status (or cleanup) is due. */
  private readonly work = new Subject<string>();

  constructor(
    private readonly objects: Registry,
    private readonly registry: ServedKinds,
    private readonly crdKind: KindStrategy,
    private readonly log: Logger,
  ) {
    this.prefix = `${collectionOf(crdKind)}//`;
  }

  start(): () => void {
    // What the store holds at start, oldest first (the first CRD to name something keeps it).
    const existing = [...this.objects.list(this.crdKind, undefined)].map((s) => s.obj);
    existing.sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
    for (const crd of existing) this.apply(crd, crd.metadata.name ?? '');
    const changes = this.objects.changes(this.crdKind).subscribe((batch) => {
      for (const c of batch) if (c.key.startsWith(this.prefix)) this.apply(c.type === 'DELETED' ? undefined : c.cur.obj, c.key.slice(this.prefix.length));
    });
    const triggers = merge(
      defer(() => from(existing.map((c) => c.metadata.name ?? ''))),
      this.work,
      // A terminating CRD waits for its objects: each of their deletes looks at it again.
      this.objects.changes().pipe(mergeMap((batch) => this.ownersOfDeleted(batch))),
    ).pipe(coalesce());
    const sub: Subscription = runSerially('custom resource definitions', this.log, triggers, (name) => this.reconcile(name));
    return () => {
      changes.unsubscribe();
      sub.unsubscribe();
    };
  }

  /** Why a CRD's names are not accepted, or undefined. */
  private conflict(name: string, group: string, names: CustomNames): CrdCondition | undefined {
    const taken = [...this.accepted].filter(([other, s]) => other !== name && s.group === group).map(([, s]) => s.names);
    // A built-in kind of the group: any kind served there that no accepted CRD defines.
    const builtIn = this.registry.all.filter((k) => k.group === group && !this.accepted.has(`${k.plural}.${k.group}`));
    const plurals = new Set([...taken.flatMap((n) => [n.plural, n.singular, ...(n.shortNames ?? [])]), ...builtIn.flatMap((k) => [k.plural, k.singular, ...(k.shortNames ?? [])])]);
    const kinds = new Set([...taken.flatMap((n) => [n.kind, n.listKind]), ...builtIn.flatMap((k) => [k.kind, k.listKind])]);
    for (const n of [names.plural, names.singular, ...(names.shortNames ?? [])]) {
      if (plurals.has(n)) return { type: 'NamesAccepted', status: 'False', reason: 'PluralConflict', message: `"${n}" is already in use` };
    }
    for (const n of [names.kind, names.listKind]) if (kinds.has(n)) return { type: 'NamesAccepted', status: 'False', reason: 'KindConflict', message: `"${n}" is already in use` };
    return undefined;
  }

  /** Serves what a CRD defines now (or stops serving it), at once; its status follows. */
  private apply(crd: KubeObject | undefined, name: string): void {
    const before = this.accepted.get(name);
    if (!crd) {
      this.accepted.delete(name);
      if (before) this.registry.remove(before.group, before.names.plural);
      return;
    }
    const group = stringAt(objectAt(crd, 'spec'), 'group');
    const names = this.registry.namesOf(crd);
    if (!before && this.conflict(name, group, names)) return this.work.next(name);
    try {
      const terminating = crd.metadata.deletionTimestamp !== undefined;
      this.registry.defineCustom(crd, terminating ? () => TERMINATING_CREATE : undefined);
      if (before && before.names.plural !== names.plural) this.registry.remove(before.group, before.names.plural);
      this.accepted.set(name, { group, names });
    } catch (err) {
      this.log.warn('custom resource definition not served', { name, error: String(err) });
      this.accepted.delete(name);
      if (before) this.registry.remove(before.group, before.names.plural);
    }
    this.work.next(name);
  }

  /** The CRDs whose objects a batch deleted. */
  private ownersOfDeleted(batch: Change[]): string[] {
    return batch.flatMap((c) => {
      if (c.type !== 'DELETED') return [];
      for (const [name, s] of this.accepted) if (c.key.startsWith(`${s.group}/${s.names.plural}/`)) return [name];
      return [];
    });
  }

  private async reconcile(name: string): Promise<void> {
    const crd = this.objects.current(this.crdKind, undefined, name)?.obj;
    if (!crd) return;
    const served = this.accepted.get(name);
    if (crd.metadata.deletionTimestamp) {
      if (served) await this.finalize(crd, served);
      return;
    }
    const refused = served ? undefined : this.conflict(name, stringAt(objectAt(crd, 'spec'), 'group'), this.registry.namesOf(crd));
    const conditions: CrdCondition[] = refused
      ? [refused, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }]
      : [
          { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
          { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
        ];
    const approval = this.registry.approvalCondition(crd);
    if (approval) conditions.push(approval);
    await this.writeStatus(name, conditions, served?.names);
  }

  private async writeStatus(name: string, conditions: CrdCondition[], acceptedNames: CustomNames | undefined): Promise<void> {
    await this.objects
      .update(this.crdKind, undefined, name, (cur) => (cur ? withStatus(cur, conditions, acceptedNames, this.objects.clock.now()) : cur!), { dryRun: false, subresource: 'status' })
      .catch(tolerated);
  }

  /** A deleted CRD: Terminating, its objects deleted, then its finalizer removed (it goes, and its kind with it). */
  private async finalize(crd: KubeObject, served: Served): Promise<void> {
    const name = crd.metadata.name ?? '';
    if (!crd.metadata.finalizers?.includes(CRD_CLEANUP_FINALIZER)) return;
    await this.writeStatus(name, [{ type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }], served.names);
    const kind = this.registry.find(served.group, served.names.plural);
    if (kind) {
      for (const s of [...this.objects.list(kind, undefined)]) {
        await this.objects.delete(kind, s.obj.metadata.namespace, s.obj.metadata.name ?? '', { dryRun: false, propagationPolicy: 'Background' }).catch(tolerated);
      }
      // Objects held by finalizers of their own: this CRD waits for them (their deletes bring it back here).
      if (!this.objects.list(kind, undefined).next().done) return;
    }
    const release = (cur: KubeObject | undefined): KubeObject =>
      cur ? { ...cur, metadata: { ...cur.metadata, finalizers: (cur.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER) } } : cur!;
    await this.objects.update(this.crdKind, undefined, name, release, { dryRun: false }).catch(tolerated);
  }
}

/** Deleted or changed meanwhile: the next change of the CRD decides again. */
function tolerated(err: unknown): void {
  if (!isRegistryError(err, 'NotFound', 'Conflict')) throw err;
}

/** The CRD with these conditions set (a condition's time moves only when its status does) and its accepted names. */
function withStatus(crd: KubeObject, conditions: CrdCondition[], acceptedNames: CustomNames | undefined, at: Date): KubeObject {
  const status = isObject(crd.status) ? { ...crd.status } : {};
  const list = listAt(status, 'conditions').filter(isObject);
  const now = rfc3339(at);
  for (const c of conditions) {
    const at = list.findIndex((x) => x.type === c.type);
    const old = at >= 0 ? list[at] : undefined;
    const next = { ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now };
    if (at >= 0) list[at] = next;
    else list.push(next);
  }
  status.conditions = list;
  if (acceptedNames) status.acceptedNames = { ...acceptedNames };
  return { ...crd, status };
}
