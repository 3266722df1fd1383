/**
 * RoleBinding (rbac.authorization.orch.io/v1): grants a Role of its namespace, or a ClusterRole's
 * permissions within its namespace, to users, groups and service accounts.
 */
import { RBAC_GROUP } from '../api/groups.js';
import { bindingColumns, bindingSchema, defaultBinding, validateBinding, validateBindingUpdate } from './rbac-shared.js';
import type { KindStrategy } from '../api/strategy.js';

export const roleBinding = {
  group: RBAC_GROUP,
  versions: ['v1'],
  kind: 'RoleBinding',
  listKind: 'RoleBindingList',
  plural: 'rolebindings',
  singular: 'rolebinding',
  namespaced: true,
  nameFormat: 'path-segment',
  hasStatus: false,
  schema: bindingSchema('RoleBinding', 'Grants the permissions of a Role or ClusterRole within a namespace.'),
  applyDefaults: defaultBinding,
  validate: (o) => validateBinding(o, true),
  validateUpdate: (o, old) => validateBindingUpdate(o, old, true),
  tableColumns: bindingColumns,
} satisfies KindStrategy;
