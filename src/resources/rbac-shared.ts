/**
 * What the four rbac.authorization.orch.io kinds share (Kubernetes' pkg/apis/rbac and its
 * validation): the PolicyRule, Subject and RoleRef schemas, their rules, and the binding columns
 * `kubectl get` prints. Roles and ClusterRoles differ only in scope and in what a rule may name;
 * RoleBindings and ClusterRoleBindings only in scope and in the role kinds they may reference.
 */
import { FieldPath, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import { isObject, isSet, jsonEqual, listAt, objectAt, stringAt } from '../api/json-access.js';
import { validateLabelSelector } from './labels.js';
import { labelSelectorSchema } from './meta-schema.js';
import { kindSchema } from './kind-schema.js';
import { isDNS1123Subdomain, isPathSegmentName } from '../api/name-formats.js';
import { atomicList, obj, str, type Schema } from '../api/schema.js';
import type { TableColumn } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { RBAC_GROUP } from '../api/groups.js';

const RBAC_V1 = 'io.orch.api.rbac.v1';

const SUBJECT_KINDS = ['ServiceAccount', 'User', 'Group'] as const;

const policyRuleSchema = obj(
  `${RBAC_V1}.PolicyRule`,
  {
    apiGroups: atomicList(str(), 'API groups of the resources; "" is the core group, "*" every group.'),
    nonResourceURLs: atomicList(str(), 'Partial URLs such as /healthz; a trailing "*" matches a prefix. Only in ClusterRoles, and never with resources.'),
    resourceNames: atomicList(str(), 'Object names the rule is limited to; empty means all.'),
    resources: atomicList(str(), 'Resources the rule applies to, "resource/subresource" for a subresource; "*" is all, "*/sub" a subresource of all.'),
    verbs: atomicList(str(), 'Verbs the rule allows; "*" is all. Required.'),
  },
  { required: ['verbs'], description: 'Actions on resources or non-resource URLs; says nothing of who may take them.' },
);

const rulesSchema = atomicList(policyRuleSchema, 'The permissions of the role.');

const subjectSchema = obj(
  `${RBAC_V1}.Subject`,
  {
    apiGroup: str('API group of the subject kind: "" for ServiceAccount, rbac.authorization.orch.io for User and Group.'),
    kind: str('ServiceAccount, User or Group.'),
    name: str('Name of the subject.'),
    namespace: str("Namespace of a ServiceAccount; in a RoleBinding it defaults to the binding's namespace."),
  },
  { required: ['kind', 'name'], 'x-kubernetes-map-type': 'atomic', description: 'A user, group or service account a binding grants a role to.' },
);

const roleRefSchema = obj(
  `${RBAC_V1}.RoleRef`,
  {
    apiGroup: str('API group of the role: rbac.authorization.orch.io.'),
    kind: str('Role or ClusterRole.'),
    name: str('Name of the role.'),
  },
  { required: ['apiGroup', 'kind', 'name'], 'x-kubernetes-map-type': 'atomic', description: 'The role a binding grants; cannot be changed.' },
);

const aggregationRuleSchema = obj(
  `${RBAC_V1}.AggregationRule`,
  {
    clusterRoleSelectors: atomicList(labelSelectorSchema, 'Selects the ClusterRoles whose rules are aggregated into this one.'),
  },
  { description: 'How a ClusterRole is built from other ClusterRoles.' },
);

export const roleSchema = (kind: 'Role' | 'ClusterRole', description: string): Schema =>
  kindSchema(`${RBAC_V1}.${kind}`, description, kind === 'Role' ? { rules: rulesSchema } : { aggregationRule: aggregationRuleSchema, rules: rulesSchema });

export const bindingSchema = (kind: 'RoleBinding' | 'ClusterRoleBinding', description: string): Schema => {
  const s = kindSchema(`${RBAC_V1}.${kind}`, description, { roleRef: roleRefSchema, subjects: atomicList(subjectSchema, 'Who the role is granted to.') });
  return { ...s, required: ['roleRef'] };
};

/** An aggregationRule, when present, selects at least one set of ClusterRoles by valid selectors. */
export function validateAggregationRule(o: KubeObject): FieldError[] {
  if (!isSet(o, 'aggregationRule')) return [];
  const p = FieldPath.root('aggregationRule').child('clusterRoleSelectors');
  const selectors = listAt(objectAt(o, 'aggregationRule'), 'clusterRoleSelectors');
  if (selectors.length === 0) return [required(p, 'at least one clusterRoleSelector required if aggregationRule is non-nil')];
  return selectors.flatMap((sel, i) => validateLabelSelector(sel, p.index(i)));
}

/** One rule: verbs always; either non-resource URLs (cluster roles only) or groups and resources. */
function validatePolicyRule(rule: unknown, namespaced: boolean, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const has = (k: string) => listAt(rule, k).length > 0;
  if (!has('verbs')) errs.push(required(p.child('verbs'), 'verbs must contain at least one value'));
  if (has('nonResourceURLs')) {
    const urls = listAt(rule, 'nonResourceURLs');
    if (namespaced) errs.push(invalid(p.child('nonResourceURLs'), urls, 'namespaced rules cannot apply to non-resource URLs'));
    if (has('apiGroups') || has('resources') || has('resourceNames')) {
      errs.push(invalid(p.child('nonResourceURLs'), urls, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }
  if (!has('apiGroups')) errs.push(required(p.child('apiGroups'), 'resource rules must supply at least one api group'));
  if (!has('resources')) errs.push(required(p.child('resources'), 'resource rules must supply at least one resource'));
  if (has('resourceNames') && listAt(rule, 'resources').length > 1) {
    errs.push(required(p.child('resourceNames'), 'resource names cannot apply to multiple resources'));
  }
  return errs;
}

export const validateRules = (o: KubeObject, namespaced: boolean): FieldError[] => listAt(o, 'rules').flatMap((r, i) => validatePolicyRule(r, namespaced, FieldPath.root('rules').index(i)));

/** A subject by its kind; a ClusterRoleBinding's service accounts must say their namespace. */
function validateSubject(s: unknown, namespaced: boolean, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = stringAt(s, 'name');
  const apiGroup = stringAt(s, 'apiGroup');
  const kind = stringAt(s, 'kind');
  if (!name) errs.push(required(p.child('name'), ''));
  switch (kind) {
    case 'ServiceAccount':
      if (name) errs.push(...isDNS1123Subdomain(name).map((m) => invalid(p.child('name'), name, m)));
      if (apiGroup) errs.push(notSupported(p.child('apiGroup'), apiGroup, ['']));
      if (!namespaced && !stringAt(s, 'namespace')) errs.push(required(p.child('namespace'), ''));
      break;
    case 'User':
    case 'Group':
      if (!name) errs.push(invalid(p.child('name'), name, `${kind.toLowerCase()} name cannot be empty`));
      if (apiGroup !== RBAC_GROUP) errs.push(notSupported(p.child('apiGroup'), apiGroup, [RBAC_GROUP]));
      break;
    default:
      errs.push(notSupported(p.child('kind'), kind, SUBJECT_KINDS));
  }
  return errs;
}

/** roleRef (the group, the kinds this binding may reference, a name) and every subject. */
export function validateBinding(o: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = objectAt(o, 'roleRef');
  const p = FieldPath.root('roleRef');
  const apiGroup = stringAt(ref, 'apiGroup');
  if (apiGroup !== RBAC_GROUP) errs.push(notSupported(p.child('apiGroup'), apiGroup, [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  const kind = stringAt(ref, 'kind');
  if (!kinds.includes(kind)) errs.push(notSupported(p.child('kind'), kind, kinds));
  const name = stringAt(ref, 'name');
  if (!name) errs.push(required(p.child('name'), ''));
  else errs.push(...isPathSegmentName(name).map((m) => invalid(p.child('name'), name, m)));
  listAt(o, 'subjects').forEach((s, i) => errs.push(...validateSubject(s, namespaced, FieldPath.root('subjects').index(i))));
  return errs;
}

/** A binding's role is fixed at creation: granting another role is a new binding. */
export function validateBindingUpdate(o: KubeObject, old: KubeObject, namespaced: boolean): FieldError[] {
  const errs = validateBinding(o, namespaced);
  const ref = objectAt(o, 'roleRef') ?? {};
  if (!jsonEqual(ref, objectAt(old, 'roleRef') ?? {})) errs.push(invalid(FieldPath.root('roleRef'), ref, 'cannot change roleRef'));
  return errs;
}

/**
 * v1 defaulting: a roleRef without a group is an RBAC role, and a User or Group subject without one
 * is RBAC's (a ServiceAccount's group stays "", the core group).
 */
export function defaultBinding(o: KubeObject): void {
  // roleRef is a struct, not a pointer, in Kubernetes: a missing one is defaulted like an empty one.
  const ref = objectAt(o, 'roleRef') ?? (o.roleRef = {});
  if (!stringAt(ref, 'apiGroup')) ref.apiGroup = RBAC_GROUP;
  for (const s of listAt(o, 'subjects')) {
    if (!isObject(s) || stringAt(s, 'apiGroup')) continue;
    if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_GROUP;
  }
}

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically.';
const CREATED_DESCRIPTION = 'CreationTimestamp is a timestamp representing the server time when this object was created.';

/** Roles print NAME and CREATED AT (the creation time itself, not an age). */
export const roleColumns: TableColumn[] = [
  { name: 'Name', type: 'string', format: 'name', priority: 0, description: NAME_DESCRIPTION, cell: (o) => o.metadata.name ?? '' },
  { name: 'Created At', type: 'date', priority: 0, description: CREATED_DESCRIPTION, cell: (o) => o.metadata.creationTimestamp ?? '' },
];

const subjectsOf = (o: KubeObject, kind: string): unknown[] => listAt(o, 'subjects').filter((s) => stringAt(s, 'kind') === kind);

/** ROLE as Kind/name, then under -o wide the users, groups and service accounts (namespace/name). */
export const bindingColumns: TableColumn[] = [
  { name: 'Role', type: 'string', priority: 0, description: 'The role the binding grants.', cell: (o) => `${stringAt(objectAt(o, 'roleRef'), 'kind')}/${stringAt(objectAt(o, 'roleRef'), 'name')}` },
  {
    name: 'Users',
    type: 'string',
    priority: 1,
    description: 'Users in the roleBinding',
    cell: (o) =>
      subjectsOf(o, 'User')
        .map((s) => stringAt(s, 'name'))
        .join(', '),
  },
  {
    name: 'Groups',
    type: 'string',
    priority: 1,
    description: 'Groups in the roleBinding',
    cell: (o) =>
      subjectsOf(o, 'Group')
        .map((s) => stringAt(s, 'name'))
        .join(', '),
  },
  {
    name: 'ServiceAccounts',
    type: 'string',
    priority: 1,
    description: 'ServiceAccounts in the roleBinding',
    cell: (o) =>
      subjectsOf(o, 'ServiceAccount')
        .map((s) => `${stringAt(s, 'namespace')}/${stringAt(s, 'name')}`)
        .join(', '),
  },
];
