/**
 * The kinds and their API types as the rooms above the door see them (http, controllers): http and the
 * controllers reach src/resources through the registry only (../shared/design.md's rooms table).
 */
export * from '../resources/cluster-role.js';
export * from '../resources/cluster-role-binding.js';
export { apiApprovalCondition } from '../resources/crd/api-approval.js';
export * from '../resources/crd/custom-kind.js';
export * from '../resources/custom-resource-definition.js';
export * from '../resources/field-check.js';
export * from '../resources/field-errors.js';
export * from '../resources/human-duration.js';
export * from '../resources/json-access.js';
export * from '../resources/kind-revisions.js';
export * from '../resources/label-selector-object.js';
export * from '../resources/qualified.js';
export * from '../resources/rbac-shared.js';
export * from '../resources/registry.js';
export * from '../resources/strategy.js';
export * from '../resources/types.js';
export * from '../resources/unknown-fields.js';
