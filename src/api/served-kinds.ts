/**
 * The kinds one server serves, as the rooms that change or follow them see them: the built-in kinds
 * and those its CustomResourceDefinitions define while it runs. src/resources implements it
 * (KindCatalog, which reads what a CRD means); the CRD controller decides when a CRD's kind is
 * served; routing, admission, discovery and OpenAPI read `all`.
 */
import type { KindStrategy } from './strategy.js';
import type { KubeObject } from './types.js';

/** A CRD's spec.names, with Kubernetes' defaults applied. */
export interface CustomNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames?: string[];
  categories?: string[];
}

/** A status condition of a CustomResourceDefinition. */
export interface CrdCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** The finalizer under which a CRD's objects are deleted before the CRD itself goes. */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.orch.io';

export interface ServedKinds {
  /** One array for the server's life, changed in place, so every holder sees a kind once defined. */
  readonly all: readonly KindStrategy[];
  /** The kind served as group/plural, if any. */
  find(group: string, plural: string): KindStrategy | undefined;
  /** Serves the kind a CRD defines, in place of the one with its group and plural; refuseCreate says why creates are refused meanwhile. */
  defineCustom(crd: KubeObject, refuseCreate?: () => string | undefined): void;
  /** Stops serving group/plural; its stored objects are the caller's to delete. */
  remove(group: string, plural: string): void;
  /** Called after every change; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  /** The names a CRD asks for. */
  namesOf(crd: KubeObject): CustomNames;
  /** A CRD's KubernetesAPIApprovalPolicyConformant condition, when its group is protected. */
  approvalCondition(crd: KubeObject): CrdCondition | undefined;
}
