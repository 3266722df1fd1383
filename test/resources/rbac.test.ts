import { describe, expect, it } from 'vitest';
import { clusterRoleBinding } from '../../src/resources/cluster-role-binding.js';
import { clusterRole } from '../../src/resources/cluster-role.js';
import { formatFieldError } from '../../src/api/field-errors.js';
import { roleBinding } from '../../src/resources/role-binding.js';
import { role } from '../../src/resources/role.js';
import { validateObjectMeta } from '../../src/resources/metadata.js';
import { fixtures, pairs, rowRunner, type Row } from './fixtures.js';

const G = 'rbac.authorization.orch.io';

describe('Role validation', () => {
  const run = rowRunner(role, fixtures.role);
  const rows: Row[] = [
    ['the fixture is valid', () => {}, []],
    ['no rules at all is a valid (empty) role', (o) => delete o.rules, []],
    ['verbs are required', (o) => (o.rules[0].verbs = []), [['FieldValueRequired', 'rules[0].verbs']]],
    ['a resource rule needs apiGroups', (o) => delete o.rules[1].apiGroups, [['FieldValueRequired', 'rules[1].apiGroups']]],
    ['a resource rule needs resources', (o) => delete o.rules[0].resources, [['FieldValueRequired', 'rules[0].resources']]],
    ['resourceNames apply to one resource only', (o) => (o.rules[1].resources = ['namespaces', 'events']), [['FieldValueRequired', 'rules[1].resourceNames']]],
    ['a Role may not name non-resource URLs', (o) => o.rules.push({ nonResourceURLs: ['/healthz'], verbs: ['get'] }), [['FieldValueInvalid', 'rules[2].nonResourceURLs']]],
    [
      'a rule is for resources or for URLs, not both',
      (o) => (o.rules[0].nonResourceURLs = ['/x']),
      [
        ['FieldValueInvalid', 'rules[0].nonResourceURLs'],
        ['FieldValueInvalid', 'rules[0].nonResourceURLs'],
      ],
    ],
    [
      'verbs, apiGroups and resources missing together',
      (o) => (o.rules = [{}]),
      [
        ['FieldValueRequired', 'rules[0].verbs'],
        ['FieldValueRequired', 'rules[0].apiGroups'],
        ['FieldValueRequired', 'rules[0].resources'],
      ],
    ],
  ];
  it.each(rows)('%s', run);

  it("the messages are Kubernetes' words", () => {
    const o = fixtures.role();
    o.rules[0].verbs = [];
    o.rules.push({ nonResourceURLs: ['/healthz'], verbs: ['get'] });
    expect(role.validate(o).map(formatFieldError)).toEqual([
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[2].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs',
    ]);
  });

  it('names are path segments: colons are fine, slashes are not', () => {
    expect(pairs(validateObjectMeta({ name: 'system:reader', namespace: 'dev' }, true, role.nameFormat))).toEqual([]);
    expect(pairs(validateObjectMeta({ name: 'a/b', namespace: 'dev' }, true, role.nameFormat))).toEqual([['FieldValueInvalid', 'metadata.name']]);
  });
});

describe('ClusterRole validation', () => {
  const run = rowRunner(clusterRole, fixtures.clusterRole);
  const rows: Row[] = [
    ['the fixture is valid (non-resource URLs allowed)', () => {}, []],
    ['URL rules need verbs too', (o) => (o.rules[1].verbs = []), [['FieldValueRequired', 'rules[1].verbs']]],
    ['a URL rule may not name groups', (o) => (o.rules[1].apiGroups = ['']), [['FieldValueInvalid', 'rules[1].nonResourceURLs']]],
    ['an aggregationRule with selectors is accepted', (o) => (o.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate-to-monitoring': 'true' } }] }), []],
    ['an aggregationRule needs a selector', (o) => (o.aggregationRule = { clusterRoleSelectors: [] }), [['FieldValueRequired', 'aggregationRule.clusterRoleSelectors']]],
    [
      'aggregationRule selectors are valid label selectors',
      (o) => (o.aggregationRule = { clusterRoleSelectors: [{ matchExpressions: [{ key: 'a', operator: 'Near' }] }] }),
      [['FieldValueInvalid', 'aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator']],
    ],
  ];
  it.each(rows)('%s', run);
});

describe('RoleBinding validation', () => {
  const run = rowRunner(roleBinding, fixtures.roleBinding);
  const rows: Row[] = [
    ['the fixture is valid (a namespaced service account may omit its namespace)', () => {}, []],
    ['a RoleBinding may reference a ClusterRole', (o) => (o.roleRef.kind = 'ClusterRole'), []],
    ['roleRef.kind is Role or ClusterRole', (o) => (o.roleRef.kind = 'Group'), [['FieldValueNotSupported', 'roleRef.kind']]],
    ['roleRef.apiGroup is the RBAC group', (o) => (o.roleRef.apiGroup = 'rbac.authorization.k8s.io'), [['FieldValueNotSupported', 'roleRef.apiGroup']]],
    ['roleRef.name is required', (o) => (o.roleRef.name = ''), [['FieldValueRequired', 'roleRef.name']]],
    ['roleRef.name is a path segment', (o) => (o.roleRef.name = '..'), [['FieldValueInvalid', 'roleRef.name']]],
    [
      'a missing roleRef',
      (o) => delete o.roleRef,
      [
        ['FieldValueNotSupported', 'roleRef.kind'],
        ['FieldValueRequired', 'roleRef.name'],
      ],
    ],
    ['subject kinds are User, Group, ServiceAccount', (o) => (o.subjects[0].kind = 'Robot'), [['FieldValueNotSupported', 'subjects[0].kind']]],
    [
      'a subject needs a name',
      (o) => (o.subjects[1].name = ''),
      [
        ['FieldValueRequired', 'subjects[1].name'],
        ['FieldValueInvalid', 'subjects[1].name'],
      ],
    ],
    ['a User is in the RBAC group', (o) => (o.subjects[0].apiGroup = 'example.com'), [['FieldValueNotSupported', 'subjects[0].apiGroup']]],
    ['a ServiceAccount is in the core group', (o) => (o.subjects[2].apiGroup = G), [['FieldValueNotSupported', 'subjects[2].apiGroup']]],
    ['a ServiceAccount name is a DNS subdomain', (o) => (o.subjects[2].name = 'Builder'), [['FieldValueInvalid', 'subjects[2].name']]],
  ];
  it.each(rows)('%s', run);

  it('defaults the RBAC group on roleRef and on User and Group subjects, not on service accounts', () => {
    const o = fixtures.roleBinding();
    delete o.roleRef.apiGroup;
    roleBinding.applyDefaults(o);
    expect(o.roleRef.apiGroup).toBe(G);
    expect(o.subjects.map((s: any) => s.apiGroup)).toEqual([G, G, undefined]);
  });

  it('roleRef cannot change on update; subjects can', () => {
    const old = fixtures.roleBinding();
    roleBinding.applyDefaults(old);
    const moreSubjects = structuredClone(old);
    moreSubjects.subjects.push({ kind: 'User', name: 'bob', apiGroup: G });
    expect(pairs(roleBinding.validateUpdate(moreSubjects, old))).toEqual([]);
    const otherRole = structuredClone(old);
    otherRole.roleRef.name = 'event-writer';
    const errs = roleBinding.validateUpdate(otherRole, old);
    expect(pairs(errs)).toEqual([['FieldValueInvalid', 'roleRef']]);
    expect(formatFieldError(errs[0])).toBe(`roleRef: Invalid value: {"apiGroup":"${G}","kind":"Role","name":"event-writer"}: cannot change roleRef`);
  });
});

describe('ClusterRoleBinding validation', () => {
  const run = rowRunner(clusterRoleBinding, fixtures.clusterRoleBinding);
  const rows: Row[] = [
    ['the fixture is valid', () => {}, []],
    ['roleRef.kind is ClusterRole only', (o) => (o.roleRef.kind = 'Role'), [['FieldValueNotSupported', 'roleRef.kind']]],
    ['a ServiceAccount subject must name its namespace', (o) => delete o.subjects[1].namespace, [['FieldValueRequired', 'subjects[1].namespace']]],
  ];
  it.each(rows)('%s', run);

  it('roleRef cannot change on update', () => {
    const old = fixtures.clusterRoleBinding();
    const next = structuredClone(old);
    next.roleRef.name = 'cluster-admin';
    expect(pairs(clusterRoleBinding.validateUpdate(next, old))).toEqual([['FieldValueInvalid', 'roleRef']]);
  });
});

describe('RBAC table columns', () => {
  it('roles print NAME and CREATED AT, no AGE', () => {
    const o = { ...fixtures.role(), metadata: { name: 'event-reader', namespace: 'dev', creationTimestamp: '2026-01-02T03:04:05Z' } };
    expect(role.tableColumns.map((c) => [c.name, c.cell(o)])).toEqual([
      ['Name', 'event-reader'],
      ['Created At', '2026-01-02T03:04:05Z'],
    ]);
  });

  it('bindings print ROLE, and under -o wide USERS, GROUPS and SERVICEACCOUNTS', () => {
    const o = fixtures.clusterRoleBinding();
    o.subjects.push({ kind: 'Group', name: 'ops' });
    expect(clusterRoleBinding.tableColumns.map((c) => [c.name, c.priority, c.cell(o)])).toEqual([
      ['Role', 0, 'ClusterRole/system:health-reader'],
      ['Users', 1, ''],
      ['Groups', 1, 'system:authenticated, ops'],
      ['ServiceAccounts', 1, 'ops/monitor'],
    ]);
  });
});
