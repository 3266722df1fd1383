import type { FieldError } from './field-errors.js';
import type { NameFormat } from './name-formats.js';
import type { Schema } from './schema.js';
import type { KubeObject } from './types.js';

/** One printed column of `kubectl get` (a Table column definition plus how to compute its cell). */
export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** 0: shown by default; 1: only with -o wide. */
  priority: number;
  cell(obj: KubeObject): string | number | boolean | null;
}

/** The scale subresource of a kind (a CRD's): where the replica counts and the selector sit, as `.spec.replicas`. */
export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/**
 * Everything that makes one kind different from another. The store and the HTTP layer run the same
 * sequence for every kind and never switch on kind: they call these hooks.
 */
export interface KindStrategy {
  /** API group; '' is the core group (served under /api/v1). */
  group: string;
  /** Served versions, preferred (storage) version first. Objects have the same shape in all of them. */
  versions: string[];
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  categories?: string[];
  namespaced: boolean;
  /** A kind a CustomResourceDefinition defines (every other kind is built in). */
  custom?: true;
  /** How metadata.name is checked; DNS subdomain when absent (Namespace names are DNS labels). */
  nameFormat?: NameFormat;
  /** A PUT to a missing name creates it (Kubernetes' AllowCreateOnUpdate: true for Events). */
  allowCreateOnUpdate?: boolean;
  /**
   * false: an update must carry metadata.resourceVersion (422 without it), as kube-apiserver's
   * AllowUnconditionalUpdate() false says for custom resources, CRDs, admission policies and Leases.
   * Absent: an update without one replaces whatever is stored.
   */
  allowUnconditionalUpdate?: false;
  /** false: the collection has no DELETE (Kubernetes serves no deletecollection for Namespaces). */
  deleteCollection?: boolean;
  /** Has a /status subresource: status is ignored on writes of the main resource. */
  hasStatus: boolean;
  /**
   * false: PATCH takes no strategic merge patch (a custom resource: its schema names no patch
   * strategies, so kube-apiserver answers 415 and leaves strategic merge out of OpenAPI).
   */
  strategicMergePatch?: false;
  /** Has a /scale subresource (an autoscaling/v1 Scale over these paths of the object). */
  scale?: ScaleSubresource;
  /**
   * A kind whose versions differ (a CRD's schema, columns and subresources are per version): the
   * strategy served at each version. Absent: every version is served by this one (see servedAt).
   */
  perVersion?: Readonly<Record<string, KindStrategy>>;
  /**
   * A kind that prunes a body on its own (a CRD's structural schema), in place of the decoder's walk
   * of `schema`: removes the fields it does not declare and returns their paths. Values of the wrong
   * JSON type are then validation errors (422, in the schema's words), not decoding errors (400): a
   * custom resource is unstructured until its schema validates it.
   */
  prune?(obj: Record<string, unknown>): string[];
  /** A Warning sent with every request to this version (a CRD's deprecated version). */
  deprecationWarning?: string;
  /** Finalizers a delete adds before it decides (a CRD's cleanup: its objects go before it does). */
  deleteFinalizers?: readonly string[];
  /** Why an object of this kind may not be created now (405), or undefined (a CRD being deleted). */
  refuseCreate?(): string | undefined;
  /** Schema of the whole object (apiVersion, kind, metadata, spec, …). */
  schema: Schema;
  /** Fills defaults in place (Kubernetes' defaulting, e.g. failurePolicy=Fail). */
  applyDefaults(obj: KubeObject): void;
  /** Create-only preparation after system metadata is set, before defaults (Kubernetes' PrepareForCreate). */
  prepareForCreate?(obj: KubeObject): void;
  /** Main-resource update preparation: fields only a subresource may change are taken from old. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  /** A delete that only marks the object (finalizers remain): changes written with the mark (Namespace → Terminating). */
  prepareForDelete?(obj: KubeObject): void;
  /**
   * Finalizers the kind keeps outside metadata.finalizers (a Namespace's spec.finalizers): while any
   * remain, a delete only marks the object, and it goes when the last is removed.
   */
  specFinalizers?(obj: KubeObject): readonly string[];
  /**
   * The /finalize subresource (Namespaces): the stored object with only what a finalize may change
   * (spec.finalizers) taken from obj.
   */
  finalizeUpdate?(obj: KubeObject, old: KubeObject): KubeObject;
  /** Why this object may never be deleted (403 Forbidden), or undefined (the default namespace, say). */
  refuseDelete?(obj: KubeObject): string | undefined;
  /** Validation of a new object, without the common metadata checks (those run generically). */
  validate(obj: KubeObject): FieldError[];
  /** Validation of an update; old is the stored object. Defaults to validate(obj) when absent. */
  validateUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /** Validation of a /status write; only the status rules apply (no spec checks) when present. */
  validateStatusUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /** Columns printed by `kubectl get` after NAME (AGE is added last when absent). */
  tableColumns: TableColumn[];
  /**
   * The columns are the whole table, Name included (format 'name'): nothing is prepended or appended.
   * Kubernetes prints Events this way, with Name last and only in wide output.
   */
  tableIncludesName?: boolean;
  /** Field selectors this kind supports beyond metadata.name and metadata.namespace. */
  fieldSelectors?: Record<string, (obj: KubeObject) => string>;
}

export const apiVersionOf = (k: Pick<KindStrategy, 'group'>, version: string): string => (k.group ? `${k.group}/${version}` : version);

/** The strategy a kind is served with at one of its versions. */
export const servedAt = (k: KindStrategy, version: string): KindStrategy => k.perVersion?.[version] ?? k;
