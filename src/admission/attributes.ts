/**
 * What every admission plugin sees of one write, computed once per admission call: the operation,
 * the kind and version, the object and the stored one, the user, the namespace's object and labels
 * (for namespaceSelector), and the `request` variable of CEL as Kubernetes fills it.
 */
import type { AdmissionRequestAttributes } from '../cel/index.js';
import { isObject } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { UserInfo } from '../config/user-info.js';
import { storageKey } from '../api/object-keys.js';
import type { StoreReads } from '../store/store.js';
import type { MatchAttributes, Operation } from './matching.js';

export interface AdmissionOptions {
  dryRun: boolean;
  subresource?: string;
}

export interface AdmissionAttributes {
  operation: Operation;
  kind: KindStrategy;
  version: string;
  name: string;
  /** '' for cluster-scoped kinds. */
  namespace: string;
  /** The object being written; null on DELETE. */
  object: KubeObject | null;
  /** The stored object; null on CREATE. */
  oldObject: KubeObject | null;
  user: UserInfo;
  dryRun: boolean;
  subresource: string;
  /** The object's Namespace, for namespaced kinds (undefined when absent or cluster-scoped). */
  namespaceObject: KubeObject | undefined;
  match: MatchAttributes;
  request: AdmissionRequestAttributes;
}

const labels = (o: KubeObject | null | undefined): Record<string, string> => (o && isObject(o.metadata?.labels) ? (o.metadata.labels as Record<string, string>) : {});
const versionOf = (apiVersion: string | undefined): string | undefined => apiVersion?.slice(apiVersion.indexOf('/') + 1) || undefined;

/** Builds the attributes of a write; obj is the stored object on DELETE. */
export function admissionAttributes(
  store: StoreReads,
  namespaceKind: KindStrategy | undefined,
  op: Operation,
  kind: KindStrategy,
  obj: KubeObject,
  old: KubeObject | undefined,
  user: UserInfo,
  opts: AdmissionOptions,
): AdmissionAttributes {
  const object = op === 'DELETE' ? null : obj;
  const oldObject = op === 'CREATE' ? null : (old ?? null);
  const name = obj.metadata.name ?? '';
  const namespace = kind.namespaced ? (obj.metadata.namespace ?? '') : '';
  const version = versionOf(obj.apiVersion) ?? kind.versions[0];
  const namespaceObject = kind.namespaced && namespaceKind && namespace ? store.get(storageKey(namespaceKind, '', namespace))?.obj : undefined;
  const subresource = opts.subresource ?? '';
  return {
    operation: op,
    kind,
    version,
    name,
    namespace,
    object,
    oldObject,
    user,
    dryRun: opts.dryRun,
    subresource,
    namespaceObject,
    match: {
      operation: op,
      group: kind.group,
      version,
      resource: kind.plural,
      subresource,
      namespaced: kind.namespaced,
      name,
      namespace,
      object,
      oldObject,
      // The Namespace itself is matched by its own labels; other cluster-scoped objects by none.
      namespaceLabels: kind === namespaceKind ? labels(object ?? oldObject) : kind.namespaced ? labels(namespaceObject) : undefined,
    },
    request: {
      kind: { group: kind.group, version, kind: kind.kind },
      resource: { group: kind.group, version, resource: kind.plural },
      requestKind: { group: kind.group, version, kind: kind.kind },
      requestResource: { group: kind.group, version, resource: kind.plural },
      ...(subresource ? { subResource: subresource, requestSubResource: subresource } : {}),
      name,
      namespace,
      operation: op,
      userInfo: user,
      dryRun: opts.dryRun,
    },
  };
}

/** The same write with the object as mutated so far (mutating plugins pass it along). */
export function withObject(a: AdmissionAttributes, object: KubeObject): AdmissionAttributes {
  if (a.operation === 'DELETE') return a;
  return { ...a, object, match: { ...a.match, object } };
}
