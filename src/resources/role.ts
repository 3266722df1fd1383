/**
 * Role (rbac.authorization.orch.io/v1): a set of permissions within one namespace, granted to
 * subjects by RoleBindings of that namespace.
 */
import { RBAC_GROUP } from '../api/groups.js';
import { roleColumns, roleSchema, validateRules } from './rbac-shared.js';
import type { KindStrategy } from '../api/strategy.js';

export const role = {
  group: RBAC_GROUP,
  versions: ['v1'],
  kind: 'Role',
  listKind: 'RoleList',
  plural: 'roles',
  singular: 'role',
  namespaced: true,
  nameFormat: 'path-segment',
  hasStatus: false,
  schema: roleSchema('Role', 'Namespaced permissions, granted by a RoleBinding.'),
  applyDefaults() {},
  // Non-resource URLs are cluster-wide, so a namespaced role may not name them.
  validate: (o) => validateRules(o, true),
  tableColumns: roleColumns,
  tableIncludesName: true,
} satisfies KindStrategy;
