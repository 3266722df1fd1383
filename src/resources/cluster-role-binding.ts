/**
 * ClusterRoleBinding (rbac.authorization.orch.io/v1): grants a ClusterRole in every namespace and
 * on cluster-scoped resources and non-resource URLs.
 */
import { RBAC_GROUP } from '../api/groups.js';
import { bindingColumns, bindingSchema, defaultBinding, validateBinding, validateBindingUpdate } from './rbac-shared.js';
import type { KindStrategy } from '../api/strategy.js';

export const clusterRoleBinding = {
  group: RBAC_GROUP,
  versions: ['v1'],
  kind: 'ClusterRoleBinding',
  listKind: 'ClusterRoleBindingList',
  plural: 'clusterrolebindings',
  singular: 'clusterrolebinding',
  namespaced: false,
  nameFormat: 'path-segment',
  hasStatus: false,
  schema: bindingSchema('ClusterRoleBinding', 'Grants the permissions of a ClusterRole cluster-wide.'),
  applyDefaults: defaultBinding,
  validate: (o) => validateBinding(o, false),
  validateUpdate: (o, old) => validateBindingUpdate(o, old, false),
  tableColumns: bindingColumns,
} satisfies KindStrategy;
