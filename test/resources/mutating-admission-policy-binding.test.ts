import { describe, expect, it } from 'vitest';
import { mutatingAdmissionPolicyBinding as kind } from '../../src/resources/mutating-admission-policy-binding.js';
import { fixtures, rowRunner, type Row } from './fixtures.js';

const run = rowRunner(kind, fixtures.mutatingAdmissionPolicyBinding);
const MR = { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] };

describe('MutatingAdmissionPolicyBinding defaults', () => {
  it('fills matchResources when present', () => {
    const o = fixtures.mutatingAdmissionPolicyBinding();
    o.spec.matchResources = structuredClone(MR);
    kind.applyDefaults(o);
    expect(o.spec.matchResources).toMatchObject({ matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} });
    expect(o.spec.matchResources.resourceRules[0].scope).toBe('*');
  });

  it.each([
    ['v1alpha1 defaults parameterNotFoundAction to Deny', 'admissionregistration.orch.io/v1alpha1', 'Deny'],
    ['v1beta1 leaves it unset (required)', 'admissionregistration.orch.io/v1beta1', undefined],
    ['v1 leaves it unset (required)', 'admissionregistration.orch.io/v1', undefined],
  ])('%s', (_n, apiVersion, want) => {
    const o = fixtures.mutatingAdmissionPolicyBinding();
    o.apiVersion = apiVersion;
    o.spec.paramRef = { name: 'p' };
    kind.applyDefaults(o);
    expect(o.spec.paramRef.parameterNotFoundAction).toBe(want);
  });
});

describe('MutatingAdmissionPolicyBinding validation', () => {
  const rows: Row[] = [
    ['the fixture is valid', () => {}, []],
    ['paramRef is optional', (o) => delete o.spec.paramRef, []],
    ['policyName is required', (o) => delete o.spec.policyName, [['FieldValueRequired', 'spec.policyName']]],
    ['policyName is a DNS subdomain', (o) => (o.spec.policyName = 'Not_A_Name'), [['FieldValueInvalid', 'spec.policyName']]],
    ['paramRef: name or selector', (o) => (o.spec.paramRef = { parameterNotFoundAction: 'Deny' }), [['FieldValueRequired', 'spec.paramRef']]],
    [
      'paramRef: name and selector exclude each other',
      (o) => (o.spec.paramRef.name = 'one'),
      [
        ['FieldValueForbidden', 'spec.paramRef.name'],
        ['FieldValueForbidden', 'spec.paramRef.selector'],
      ],
    ],
    ['paramRef: name is a path segment', (o) => (o.spec.paramRef = { name: 'a/b', parameterNotFoundAction: 'Deny' }), [['FieldValueInvalid', 'spec.paramRef.name']]],
    ['paramRef: selector is a valid selector', (o) => (o.spec.paramRef.selector = { matchLabels: { 'bad key': 'x' } }), [['FieldValueInvalid', 'spec.paramRef.selector.matchLabels']]],
    ['paramRef: parameterNotFoundAction required', (o) => delete o.spec.paramRef.parameterNotFoundAction, [['FieldValueRequired', 'spec.paramRef.parameterNotFoundAction']]],
    ['paramRef: parameterNotFoundAction Allow or Deny', (o) => (o.spec.paramRef.parameterNotFoundAction = 'Ignore'), [['FieldValueNotSupported', 'spec.paramRef.parameterNotFoundAction']]],
    ['matchResources: valid rules pass', (o) => (o.spec.matchResources = structuredClone(MR)), []],
    [
      'matchResources: DELETE cannot be matched',
      (o) => (o.spec.matchResources = { resourceRules: [{ ...MR.resourceRules[0], operations: ['DELETE'] }] }),
      [['FieldValueNotSupported', 'spec.matchResources.resourceRules[0].operations[0]']],
    ],
    [
      'matchResources: matchPolicy Exact or Equivalent',
      (o) => (o.spec.matchResources = { ...structuredClone(MR), matchPolicy: 'Loose' }),
      [['FieldValueNotSupported', 'spec.matchResources.matchPolicy']],
    ],
  ];
  it.each(rows)('%s', run);
});

describe('MutatingAdmissionPolicyBinding table', () => {
  it.each([
    ['name with namespace', { name: 'p', namespace: 'ns' }, 'ns/p'],
    ['name without namespace', { name: 'p' }, '*/p'],
    ['selector', { selector: { matchLabels: { b: '2', a: '1' } } }, '&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{},}'],
    ['none', undefined, '<unset>'],
  ])('PARAMREF for %s', (_n, paramRef, want) => {
    const o = fixtures.mutatingAdmissionPolicyBinding();
    o.spec.paramRef = paramRef;
    expect(kind.tableColumns.map((c) => c.cell(o))).toEqual(['sidecar.example.com', want]);
  });
});
