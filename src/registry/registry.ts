import { randomBytes, randomUUID } from 'node:crypto';
import type { FieldError } from '../api/field-errors.js';
import { cloneJson, jsonEqual } from '../api/json-access.js';
import { apiVersionOf, type KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { runAsWrite, type AdmissionHooks } from '../admission/index.js';
import { ContinueTokens } from '../store/continue-token.js';
import { storageKey } from '../api/object-keys.js';
import type { Store, UpdateResult } from '../store/store.js';
import type { StoredObject } from '../store/stored-object.js';
import * as E from './errors.js';
import { LogError, StoreError } from './errors.js';
import { qualified } from '../api/qualified.js';
import { validateCreate, validateUpdate } from './validate.js';
import { WriteGate } from './write-gate.js';
import { stageLap, stageStart } from '../observability/stage-timing.js';
import { gcFinalizers, mainUpdate, randomSuffix, rfc3339, sameObject, specOf, statusUpdate } from './object-meta.js';
import { trackApply, trackUpdate, type WriteTarget } from './field-manager.js';
import { ObjectReads } from './reads.js';

/**
 * The one door to the objects. Writes: Kubernetes' generic registry store, the fixed sequence every
 * kind goes through on create, update and delete (the field manager, system metadata, strategy hooks,
 * admission, validation, preconditions, the write), written once. Reads (reads.ts): get, list, watch
 * and the changes controllers follow. It never switches on kind: differences come from the
 * KindStrategy, so a kind added at run time goes through it like any other.
 */
export interface Clock {
  now(): Date;
}

/** Who writes, for managedFields: the manager's name and the version the request was made in. */
export interface FieldManagement {
  manager: string;
  version: string;
}

export interface WriteOptions {
  dryRun: boolean;
  /** Records the write in managedFields (an Update by this manager); unset: not recorded. */
  fieldManager?: FieldManagement;
}

export interface UpdateOptions extends WriteOptions {
  /** status: only status is written; finalize (a Namespace's): only spec.finalizers. */
  subresource?: 'status' | 'finalize';
  allowCreate?: boolean;
}

export interface DeleteOptions extends WriteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** A corrupt object (its stored data cannot be read) is removed from storage, unsafely. */
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

/** An update's answer: the object, whether it was created, and its JSON when the store has it already (see Store.put). */
export interface Updated {
  obj: KubeObject;
  created: boolean;
  json?: Buffer;
}

/**
 * The new object computed from the current one (undefined when absent) inside the update's retry
 * loop: a patch is re-applied to the latest object on a write race instead of failing.
 */
export type UpdateTransform = (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>;

// Admission (src/admission) plugs in through AdmissionHooks: mutate before validation, validate after it.

export { rfc3339 };

export class Registry extends ObjectReads {
  /** The writes in flight, and the gate reset() closes while it runs. */
  readonly writes = new WriteGate();

  constructor(
    store: Store,
    readonly clock: Clock,
    private readonly admission?: AdmissionHooks,
    /** Continue tokens of lists; replicas share the secret, so any of them continues a list. */
    tokens = new ContinueTokens(randomBytes(32)),
  ) {
    super(store, tokens);
  }

  async create(kind: KindStrategy, namespace: string | undefined, incoming: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    return (await this.createStored(kind, namespace, incoming, opts)).obj;
  }

  /** create, answering the stored version: with its JSON when a watcher encoded it already (see Store.put). */
  createStored(kind: KindStrategy, namespace: string | undefined, incoming: KubeObject, opts: WriteOptions): Promise<StoredObject> {
    return this.writes.through(() => runAsWrite(writeOf('create', opts), () => this.createInside(kind, namespace, incoming, opts)));
  }

  private async createInside(kind: KindStrategy, namespace: string | undefined, incoming: KubeObject, opts: WriteOptions): Promise<StoredObject> {
    let t = stageStart();
    const refusal = kind.refuseCreate?.();
    if (refusal) throw E.methodNotAllowed(refusal);
    if (opts.fieldManager) {
      trackUpdate(target(kind, opts, this.clock.now()), undefined, incoming, opts.fieldManager.manager);
      t = stageLap('fieldManager', t);
    }
    let obj = incoming;
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = meta.generateName + randomSuffix();
    if (meta.resourceVersion) throw E.badRequest('resourceVersion should not be set on objects to be created');
    if (kind.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.clock.now());
    meta.generation = 1;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    // Status belongs to the system: a create starts with an empty one (PrepareForCreate).
    if (kind.hasStatus) delete obj.status;
    kind.prepareForCreate?.(obj);
    kind.applyDefaults(obj);
    // NamespaceLifecycle is mutating admission in Kubernetes: it answers before validation does.
    if (kind.namespaced) this.requireNamespace(namespace ?? '', kind, meta.name);
    t = stageLap('defaults', t);
    if (this.admission) {
      // Awaited and defaulted again only when admission ran something (AdmissionHooks): a create with
      // none takes no turn here and is not defaulted a third time.
      const mutated = this.admission.mutate('CREATE', kind, obj, undefined, opts);
      if (mutated instanceof Promise) {
        obj = await mutated;
        kind.applyDefaults(obj);
      }
    }
    t = stageLap('admission', t);
    const name = obj.metadata.name;
    this.invalidIf(kind, name, validateCreate(kind, obj));
    t = stageLap('validation', t);
    const admitted = this.admission?.validate('CREATE', kind, obj, undefined, opts);
    if (admitted) await admitted;
    stageLap('admission', t);
    const key = this.key(kind, namespace, name ?? '');
    // Stored, though unreadable: the name is taken (etcd's create compares the key's existence only).
    if (this.corrupt(key)) throw E.alreadyExists(qualified(kind, name));
    // A dry run still answers what the write would: an existing name is AlreadyExists.
    if (opts.dryRun) {
      if (this.store.get(key)) throw E.alreadyExists(qualified(kind, name));
      return { key, seq: 0, obj };
    }
    try {
      return await this.store.put(key, obj, 'absent');
    } catch (err) {
      throw this.translate(err, kind, name);
    }
  }

  /**
   * PUT of the main resource or of /status, or a patch (a transform of the latest object). Status in
   * a main-resource write is ignored and the spec of a /status write is ignored, each taken from the
   * stored object.
   */
  update(kind: KindStrategy, namespace: string | undefined, name: string, incoming: KubeObject | UpdateTransform, opts: UpdateOptions): Promise<Updated> {
    return this.writes.through(() => runAsWrite(writeOf('update', opts), () => this.updateInside(kind, namespace, name, incoming, opts)));
  }

  private async updateInside(kind: KindStrategy, namespace: string | undefined, name: string, incoming: KubeObject | UpdateTransform, opts: UpdateOptions): Promise<Updated> {
    const key = this.key(kind, namespace, name);
    const corrupt = this.corruptError(key);
    if (corrupt) throw corrupt;
    let created = false;
    let dryResult: KubeObject | undefined;
    try {
      const { stored } = await this.store.update(key, async (cur): Promise<UpdateResult> => {
        created = false;
        const live = cur ? cloneJson(cur.obj) : undefined;
        const obj: KubeObject = typeof incoming === 'function' ? await incoming(live) : cloneJson(incoming);
        // Inside the retry loop: the managedFields follow the object actually replaced.
        if (opts.fieldManager) trackUpdate(target(kind, opts, this.clock.now()), live, obj, opts.fieldManager.manager);
        if (!cur) {
          if (!opts.allowCreate || opts.subresource) throw E.notFound(qualified(kind, name));
          created = true;
          const { resourceVersion: _rv, ...meta } = obj.metadata;
          obj.metadata = meta;
          dryResult = (await this.createInside(kind, namespace, obj, { dryRun: true })).obj;
          return opts.dryRun ? { kind: 'noop' } : { kind: 'put', obj: dryResult };
        }
        const old = cur.obj;
        // A replaced object's uid is a precondition (Kubernetes' DefaultUpdatedObjectInfo), checked
        // before its resourceVersion. (Kubernetes gives patches none, and answers a patch that
        // changes the uid 422 rather than 409: both refuse it.)
        const uid = obj.metadata.uid;
        if (uid && uid !== old.metadata.uid) {
          throw E.conflict(qualified(kind, name), `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${old.metadata.uid ?? ''}`);
        }
        const rv = obj.metadata.resourceVersion;
        // A patch or an apply starts from the stored object, its version included: only a PUT can lack one.
        if ((rv === undefined || rv === '') && kind.allowUnconditionalUpdate === false && typeof incoming !== 'function') throw unconditional(kind, name);
        if (rv !== undefined && rv !== '' && rv !== String(cur.seq)) {
          throw E.conflict(qualified(kind, name), MODIFIED);
        }
        if (opts.subresource === 'finalize' && !kind.finalizeUpdate) throw E.notFound(qualified(kind, name));
        let next = opts.subresource === 'status' ? statusUpdate(old, obj) : opts.subresource === 'finalize' ? kind.finalizeUpdate!(obj, old) : mainUpdate(kind, old, obj);
        if (opts.subresource === undefined) kind.prepareForUpdate?.(next, old);
        kind.applyDefaults(next);
        if (this.admission) {
          const mutated = this.admission.mutate('UPDATE', kind, next, old, opts);
          if (mutated instanceof Promise) {
            next = await mutated;
            kind.applyDefaults(next);
          }
        }
        if (!jsonEqual(specOf(kind, next), specOf(kind, old))) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
        this.invalidIf(kind, name, validateUpdate(kind, next, old, opts.subresource === 'status' ? 'status' : undefined));
        const admitted = this.admission?.validate('UPDATE', kind, next, old, opts);
        if (admitted) await admitted;
        dryResult = next;
        if (opts.dryRun || sameObject(next, old)) return { kind: 'noop' };
        // The last finalizer removed from an object being deleted: the object goes now.
        if (next.metadata.deletionTimestamp && !held(kind, next)) return { kind: 'delete', obj: next };
        return { kind: 'put', obj: next };
      });
      if (opts.dryRun || !stored) return { obj: dryResult!, created };
      return stored.json ? { obj: stored.obj, created, json: stored.json } : { obj: stored.obj, created };
    } catch (err) {
      throw this.translate(err, kind, name);
    }
  }

  /**
   * A server-side apply of config by opts.fieldManager: the field manager merges it into the latest
   * object by who owns which field (conflicts refused unless force), then it is an update like any
   * other; an object that does not exist is created.
   */
  apply(kind: KindStrategy, namespace: string | undefined, name: string, config: KubeObject, opts: UpdateOptions & { fieldManager: FieldManagement; force: boolean }): Promise<Updated> {
    const { fieldManager, force, ...rest } = opts;
    const merged = (live: KubeObject | undefined): KubeObject => {
      const obj = trackApply(target(kind, opts, this.clock.now()), live, config, fieldManager.manager, force);
      obj.metadata.name = name;
      return obj;
    };
    return runAsWrite(writeOf('patch', opts), () => this.update(kind, namespace, name, merged, { ...rest, allowCreate: true }));
  }

  /**
   * DELETE: with finalizers the object is only marked (deletionTimestamp) and answered 202; without,
   * it is removed and answered 200 with a Success Status.
   */
  delete(kind: KindStrategy, namespace: string | undefined, name: string, opts: DeleteOptions): Promise<{ deleted: boolean; obj: KubeObject }> {
    return this.writes.through(() => runAsWrite(writeOf('delete', opts), () => this.deleteInside(kind, namespace, name, opts)));
  }

  private async deleteInside(kind: KindStrategy, namespace: string | undefined, name: string, opts: DeleteOptions): Promise<{ deleted: boolean; obj: KubeObject }> {
    const key = this.key(kind, namespace, name);
    const corrupt = this.corruptError(key);
    if (corrupt) {
      if (!opts.ignoreStoreReadErrorWithClusterBreakingPotential) throw corrupt;
      return { deleted: true, obj: await this.unsafeDelete(kind, namespace, name, key) };
    }
    let deleted = false;
    let last: KubeObject | undefined;
    try {
      await this.store.update(key, async (cur): Promise<UpdateResult> => {
        if (!cur) throw E.notFound(qualified(kind, name));
        // Refusals of the kind come first, as Kubernetes' admission runs before the preconditions.
        const refusal = kind.refuseDelete?.(cur.obj);
        if (refusal) throw E.forbidden(qualified(kind, name), refusal);
        const pre = opts.preconditions;
        if (pre?.uid && pre.uid !== cur.obj.metadata.uid) {
          throw E.conflict(qualified(kind, name), `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.obj.metadata.uid ?? ''}`);
        }
        if (pre?.resourceVersion && pre.resourceVersion !== String(cur.seq)) {
          throw E.conflict(qualified(kind, name), `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.seq}`);
        }
        const obj = cloneJson(cur.obj);
        // The kind's own finalizers join on the first delete (a CRD's objects go before it does).
        const added = obj.metadata.deletionTimestamp ? [] : (kind.deleteFinalizers ?? []);
        const finalizers = gcFinalizers([...(obj.metadata.finalizers ?? []), ...added], opts);
        // Mutating admission sees a DELETE too (a webhook may refuse it) but cannot change the object.
        await this.admission?.mutate('DELETE', kind, obj, cur.obj, opts);
        await this.admission?.validate('DELETE', kind, obj, cur.obj, opts);
        if (finalizers.length > 0 || (kind.specFinalizers?.(obj).length ?? 0) > 0) {
          deleted = false;
          if (!obj.metadata.deletionTimestamp) {
            // kube-apiserver's markAsDeleting: controllers that act on generation changes see the mark.
            if ((obj.metadata.generation ?? 0) > 0) obj.metadata.generation = (obj.metadata.generation ?? 0) + 1;
            obj.metadata.deletionTimestamp = rfc3339(this.clock.now());
            obj.metadata.deletionGracePeriodSeconds = 0;
          }
          if (finalizers.length) obj.metadata.finalizers = finalizers;
          kind.prepareForDelete?.(obj);
          last = obj;
          return opts.dryRun || sameObject(obj, cur.obj) ? { kind: 'noop' } : { kind: 'put', obj };
        }
        deleted = true;
        last = obj;
        return opts.dryRun ? { kind: 'noop' } : { kind: 'delete', obj };
      });
    } catch (err) {
      throw this.translate(err, kind, name);
    }
    return { deleted, obj: last! };
  }

  /**
   * Removes a corrupt object from storage: no finalizers, preconditions or admission (they would
   * need the object). The delete record carries what is known of it, its identity, so watchers
   * see it go.
   */
  private async unsafeDelete(kind: KindStrategy, namespace: string | undefined, name: string, key: string): Promise<KubeObject> {
    const obj: KubeObject = {
      apiVersion: apiVersionOf(kind, kind.versions[0]),
      kind: kind.kind,
      metadata: kind.namespaced ? { name, namespace: namespace ?? '' } : { name },
    };
    await this.store.removeUnreadable(key, obj);
    return obj;
  }

  /** NamespaceLifecycle: the namespace exists, and is not being deleted (the refusal names the object created, as Kubernetes'). */
  private requireNamespace(namespace: string, kind: KindStrategy, name: string | undefined): void {
    const ns = this.store.get(storageKey({ group: '', plural: 'namespaces' }, '', namespace));
    if (!ns) throw E.notFound({ group: '', resource: 'namespaces', kind: 'namespaces', name: namespace });
    if (ns.obj.metadata.deletionTimestamp) {
      throw E.forbidden(qualified(kind, name), `unable to create new content in namespace ${namespace} because it is being terminated`);
    }
  }

  private invalidIf(kind: KindStrategy, name: string | undefined, errors: FieldError[]): void {
    if (errors.length > 0) throw E.invalid(qualified(kind, name), errors);
  }

  /** A write's storage errors in the registry's terms, about the object written (its clients tolerate some by code). */
  private translate(err: unknown, kind: KindStrategy, name: string | undefined): unknown {
    // From a log shared by replicas (etcd): unreachable (the write may have happened), or other
    // replicas kept writing first.
    if (err instanceof LogError && err.code === 'UNAVAILABLE') return E.unavailable(`storage is unavailable: ${err.message}`);
    if (err instanceof LogError && err.code === 'CONFLICT') return E.conflict(qualified(kind, name), MODIFIED);
    if (!(err instanceof StoreError)) return err;
    switch (err.code) {
      case 'KEY_EXISTS':
        return E.alreadyExists(qualified(kind, name));
      case 'NOT_FOUND':
        return E.notFound(qualified(kind, name));
      case 'CONFLICT':
      case 'TOO_MANY_RETRIES':
        return E.conflict(qualified(kind, name), MODIFIED);
      default:
        // COMPACTED, FUTURE_SEQ: worded by the error table.
        return err;
    }
  }
}

/**
 * An update without a resourceVersion of a kind that needs one. kube-apiserver names the resource
 * (plural) where NewInvalid wants a kind, and prints the missing version as Go prints uint64 0 (0x0).
 */
const unconditional = (kind: KindStrategy, name: string): E.RegistryError =>
  E.invalid({ group: kind.group, resource: kind.plural, kind: kind.plural, name }, [{ type: 'FieldValueInvalid', field: 'metadata.resourceVersion', detail: '0x0: must be specified for an update' }]);

/** Finalizers still hold the object: its own, or those its kind keeps in its spec (a Namespace's). */
const held = (kind: KindStrategy, o: KubeObject): boolean => (o.metadata.finalizers?.length ?? 0) > 0 || (kind.specFinalizers?.(o).length ?? 0) > 0;

const MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

/** What a write does, for the log to keep when no request says (a controller's write). */
const writeOf = (verb: string, opts: { fieldManager?: FieldManagement; subresource?: string }) => ({
  verb,
  ...(opts.subresource ? { subresource: opts.subresource } : {}),
  ...(opts.fieldManager ? { manager: opts.fieldManager.manager } : {}),
});

const target = (kind: KindStrategy, opts: { fieldManager?: FieldManagement; subresource?: string }, at: Date): WriteTarget => ({
  kind,
  at,
  version: opts.fieldManager?.version ?? kind.versions[0],
  ...(opts.subresource === 'status' ? { subresource: 'status' as const } : {}),
});
