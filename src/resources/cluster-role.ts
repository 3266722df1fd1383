/**
 * ClusterRole (rbac.authorization.orch.io/v1): permissions on resources of every namespace, on
 * cluster-scoped resources and on non-resource URLs; granted cluster-wide by ClusterRoleBindings or
 * within one namespace by RoleBindings. An aggregationRule is accepted and stored; orchd runs no
 * aggregation controller, so the rules of an aggregated role are whatever was written to it.
 */
import { RBAC_GROUP, roleColumns, roleSchema, validateAggregationRule, validateRules } from './rbac-shared.js';
import type { KindStrategy } from './strategy.js';

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
