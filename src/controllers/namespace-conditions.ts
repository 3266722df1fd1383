import { jsonEqual } from '../api/json-access.js';

/** What a terminating namespace still holds: objects by resource (`plural.group`), and their finalizers. */
export interface Remaining {
  byResource: Map<string, number>;
  byFinalizer: Map<string, number>;
}

export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False';
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/**
 * The conditions Kubernetes' namespace controller writes on a terminating namespace, in its words
 * (pkg/controller/namespace/deletion/status_condition_utils.go). A resource of the core group is
 * named `plural.` with the dot, as it prints `%s.%s`. orchd's discovery and parsing cannot fail, so
 * those two conditions are always False.
 */
export function namespaceConditions(r: Remaining, now: string): NamespaceCondition[] {
  const c = (type: string, status: 'True' | 'False', reason: string, message: string): NamespaceCondition => ({ type, status, lastTransitionTime: now, reason, message });
  const sorted = (m: Map<string, number>, line: (key: string, n: number) => string) =>
    [...m]
      .map(([k, n]) => line(k, n))
      .sort()
      .join(', ');
  return [
    c('NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', 'All resources successfully discovered'),
    c('NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'),
    c('NamespaceDeletionContentFailure', 'False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'),
    r.byResource.size === 0
      ? c('NamespaceContentRemaining', 'False', 'ContentRemoved', 'All content successfully removed')
      : c('NamespaceContentRemaining', 'True', 'SomeResourcesRemain', `Some resources are remaining: ${sorted(r.byResource, (k, n) => `${k} has ${n} resource instances`)}`),
    r.byFinalizer.size === 0
      ? c('NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished')
      : c(
          'NamespaceFinalizersRemaining',
          'True',
          'SomeFinalizersRemain',
          `Some content in the namespace has finalizers remaining: ${sorted(r.byFinalizer, (k, n) => `${k} in ${n} resource instances`)}`,
        ),
  ];
}

/** The same conditions but for their transition times: no write is needed. */
export function sameConditions(current: unknown, next: NamespaceCondition[]): boolean {
  if (!Array.isArray(current)) return false;
  const strip = (list: unknown[]) => list.map((x) => ({ ...(x as object), lastTransitionTime: undefined }));
  return jsonEqual(strip(current), strip(next));
}
