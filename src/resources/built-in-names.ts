/**
 * The built-in kinds' names, in kinds.ts's order, without their schemas, validation or CEL: what a
 * command looks a RESOURCE up by (`orchd history events/e1`) without loading every kind, which was
 * most of its start (bench/RESULTS.md, issue 40). test/resources/built-in-names.test.ts holds it
 * equal to the kinds' own names, so a kind added there and not here fails.
 */
import { RBAC_GROUP } from '../api/groups.js';
import type { KindNames } from '../api/kind-names.js';

const ADMISSION = 'admissionregistration.orch.io';
const v1 = ['v1'];

const named = (group: string, kind: string, plural: string, namespaced: boolean, shortNames?: string[], versions = v1): KindNames => ({
  group,
  versions,
  kind,
  plural,
  singular: kind.toLowerCase(),
  ...(shortNames ? { shortNames } : {}),
  namespaced,
});

export const builtInNames: readonly KindNames[] = [
  named('', 'Namespace', 'namespaces', false, ['ns']),
  named('events.orch.io', 'Event', 'events', true, ['ev']),
  named(ADMISSION, 'MutatingAdmissionPolicy', 'mutatingadmissionpolicies', false, undefined, ['v1', 'v1beta1', 'v1alpha1']),
  named(ADMISSION, 'MutatingAdmissionPolicyBinding', 'mutatingadmissionpolicybindings', false, undefined, ['v1', 'v1beta1', 'v1alpha1']),
  named(ADMISSION, 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false),
  named(ADMISSION, 'ValidatingAdmissionPolicy', 'validatingadmissionpolicies', false),
  named(ADMISSION, 'ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', false),
  named(RBAC_GROUP, 'ClusterRole', 'clusterroles', false),
  named(RBAC_GROUP, 'ClusterRoleBinding', 'clusterrolebindings', false),
  named(RBAC_GROUP, 'Role', 'roles', true),
  named(RBAC_GROUP, 'RoleBinding', 'rolebindings', true),
  named('apiextensions.orch.io', 'CustomResourceDefinition', 'customresourcedefinitions', false, ['crd', 'crds']),
  named('', 'ConfigMap', 'configmaps', true, ['cm']),
  named('', 'Secret', 'secrets', true),
  named('', 'ServiceAccount', 'serviceaccounts', true, ['sa']),
  named('', 'Event', 'events', true, ['ev']),
  named('coordination.orch.io', 'Lease', 'leases', true),
];
