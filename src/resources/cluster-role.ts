/**
 * ClusterRole (rbac.authorization.orch.io/v1): permissions on resources of every namespace, on
 * cluster-scoped resources and on non-resource URLs; granted cluster-wide by ClusterRoleBindings or
 * within one namespace by RoleBindings. A ClusterRole with an aggregationRule has its rules written
 * by the aggregation controller (src/controllers/cluster-role-aggregation.ts) from the roles it selects.
 */
import { RBAC_GROUP } from '../api/groups.js';
import { roleColumns, roleSchema, validateAggregationRule, validateRules } from './rbac-shared.js';
import type { KindStrategy } from '../api/strategy.js';

export const clusterRole = {
  group: RBAC_GROUP,
  versions: ['v1'],
  kind: 'ClusterRole',
  listKind: 'ClusterRoleList',
  plural: 'clusterroles',
  singular: 'clusterrole',
  namespaced: false,
  nameFormat: 'path-segment',
  hasStatus: false,
  schema: roleSchema('ClusterRole', 'Cluster-wide permissions, granted by a ClusterRoleBinding or, within a namespace, by a RoleBinding.'),
  applyDefaults() {},
  validate: (o) => [...validateRules(o, false), ...validateAggregationRule(o)],
  tableColumns: roleColumns,
  tableIncludesName: true,
} satisfies KindStrategy;
