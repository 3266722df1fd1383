import { describe, expect, it } from 'vitest';
import { mutatingAdmissionPolicy as kind } from '../../src/resources/mutating-admission-policy.js';
import { fixtures, pairs, repeat, rowRunner, type Row } from './fixtures.js';

const run = rowRunner(kind, fixtures.mutatingAdmissionPolicy);
const S = 'spec';

describe('MutatingAdmissionPolicy defaults', () => {
  it('fills failurePolicy, matchPolicy, selectors and rule scope; not reinvocationPolicy', () => {
    const o = fixtures.mutatingAdmissionPolicy();
    delete o.spec.reinvocationPolicy;
    kind.applyDefaults(o);
    expect(o.spec.failurePolicy).toBe('Fail');
    expect(o.spec.matchConstraints).toMatchObject({ matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} });
    expect(o.spec.matchConstraints.resourceRules[0].scope).toBe('*');
    expect(o.spec.reinvocationPolicy).toBeUndefined();
  });

  it('keeps what the client set', () => {
    const o = fixtures.mutatingAdmissionPolicy();
    o.spec.failurePolicy = 'Ignore';
    o.spec.matchConstraints.matchPolicy = 'Exact';
    o.spec.matchConstraints.resourceRules[0].scope = 'Namespaced';
    kind.applyDefaults(o);
    expect([o.spec.failurePolicy, o.spec.matchConstraints.matchPolicy, o.spec.matchConstraints.resourceRules[0].scope]).toEqual(['Ignore', 'Exact', 'Namespaced']);
  });
});

describe('MutatingAdmissionPolicy validation', () => {
  const rows: Row[] = [
    ['the fixture is valid', () => {}, []],
    ['failurePolicy Ignore is allowed', (o) => (o.spec.failurePolicy = 'Ignore'), []],
    ['failurePolicy must be Ignore or Fail', (o) => (o.spec.failurePolicy = 'Sometimes'), [['FieldValueNotSupported', `${S}.failurePolicy`]]],
    ['matchConstraints is required', (o) => delete o.spec.matchConstraints, [['FieldValueRequired', `${S}.matchConstraints`]]],
    ['matchConstraints needs a resourceRule', (o) => (o.spec.matchConstraints.resourceRules = []), [['FieldValueRequired', `${S}.matchConstraints.resourceRules`]]],
    [
      'matchConstraints may not match DELETE',
      (o) => (o.spec.matchConstraints.resourceRules[0].operations = ['DELETE']),
      [['FieldValueNotSupported', `${S}.matchConstraints.resourceRules[0].operations[0]`]],
    ],
    ['matchConstraints may match CREATE, UPDATE and CONNECT', (o) => (o.spec.matchConstraints.resourceRules[0].operations = ['CREATE', 'UPDATE', 'CONNECT']), []],
    ["matchConstraints may match '*' (CREATE, UPDATE, CONNECT)", (o) => (o.spec.matchConstraints.resourceRules[0].operations = ['*']), []],
    ['an excluded DELETE rule is fine', (o) => (o.spec.matchConstraints.excludeResourceRules = [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }]), []],
    [
      'rules covering the policy kinds are accepted (exempted at admission, as Kubernetes does)',
      (o) => (o.spec.matchConstraints.resourceRules[0] = { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }),
      [],
    ],
    ['matchConditions: at most 64', (o) => (o.spec.matchConditions = repeat(65, (i) => ({ name: `c${i}`, expression: 'true' }))), [['FieldValueTooMany', `${S}.matchConditions`]]],
    ['matchConditions: 64 is fine', (o) => (o.spec.matchConditions = repeat(64, (i) => ({ name: `c${i}`, expression: 'true' }))), []],
    [
      'matchConditions: names unique',
      (o) =>
        (o.spec.matchConditions = [
          { name: 'a', expression: 'true' },
          { name: 'a', expression: 'false' },
        ]),
      [['FieldValueDuplicate', `${S}.matchConditions[1].name`]],
    ],
    ['matchConditions: name required', (o) => (o.spec.matchConditions = [{ expression: 'true' }]), [['FieldValueRequired', `${S}.matchConditions[0].name`]]],
    ['matchConditions: name a qualified name', (o) => (o.spec.matchConditions = [{ name: 'a b', expression: 'true' }]), [['FieldValueInvalid', `${S}.matchConditions[0].name`]]],
    ['matchConditions: expression required', (o) => (o.spec.matchConditions = [{ name: 'a', expression: '  ' }]), [['FieldValueRequired', `${S}.matchConditions[0].expression`]]],
    ['mutations: at least one', (o) => (o.spec.mutations = []), [['FieldValueRequired', `${S}.mutations`]]],
    ['mutations: patchType required', (o) => (o.spec.mutations = [{ jsonPatch: { expression: '[]' } }]), [['FieldValueRequired', `${S}.mutations[0].patchType`]]],
    ['mutations: patchType ApplyConfiguration or JSONPatch', (o) => (o.spec.mutations[0].patchType = 'Merge'), [['FieldValueNotSupported', `${S}.mutations[0].patchType`]]],
    ['mutations: JSONPatch with jsonPatch is valid', (o) => (o.spec.mutations = [{ patchType: 'JSONPatch', jsonPatch: { expression: '[]' } }]), []],
    [
      'mutations: JSONPatch needs jsonPatch and forbids applyConfiguration',
      (o) => (o.spec.mutations[0].patchType = 'JSONPatch'),
      [
        ['FieldValueRequired', `${S}.mutations[0].jsonPatch`],
        ['FieldValueInvalid', `${S}.mutations[0].applyConfiguration`],
      ],
    ],
    [
      'mutations: ApplyConfiguration needs applyConfiguration and forbids jsonPatch',
      (o) => (o.spec.mutations = [{ patchType: 'ApplyConfiguration', jsonPatch: { expression: '[]' } }]),
      [
        ['FieldValueRequired', `${S}.mutations[0].applyConfiguration`],
        ['FieldValueInvalid', `${S}.mutations[0].jsonPatch`],
      ],
    ],
    ['mutations: the expression may not be blank', (o) => (o.spec.mutations[0].applyConfiguration.expression = ' '), [['FieldValueRequired', `${S}.mutations[0].applyConfiguration.expression`]]],
    ['reinvocationPolicy is required', (o) => delete o.spec.reinvocationPolicy, [['FieldValueRequired', `${S}.reinvocationPolicy`]]],
    ['reinvocationPolicy IfNeeded is allowed', (o) => (o.spec.reinvocationPolicy = 'IfNeeded'), []],
    ['reinvocationPolicy must be Never or IfNeeded', (o) => (o.spec.reinvocationPolicy = 'Always'), [['FieldValueNotSupported', `${S}.reinvocationPolicy`]]],
    ['paramKind: kind required', (o) => (o.spec.paramKind = { apiVersion: 'v1' }), [['FieldValueRequired', `${S}.paramKind.kind`]]],
    ['variables: name a CEL identifier', (o) => (o.spec.variables[0].name = 'my-var'), [['FieldValueInvalid', `${S}.variables[0].name`]]],
    ['variables: names unique', (o) => o.spec.variables.push({ name: 'labels', expression: '1' }), [['FieldValueDuplicate', `${S}.variables[1].name`]]],
    [
      'variables: only earlier variables may be referenced',
      (o) =>
        (o.spec.variables = [
          { name: 'a', expression: 'variables.b + 1' },
          { name: 'b', expression: '1' },
        ]),
      [['FieldValueInvalid', `${S}.variables[0].expression`]],
    ],
  ];
  it.each(rows)('%s', run);

  it('an update runs the create rules (no separate validateUpdate)', () => {
    expect('validateUpdate' in kind).toBe(false);
    const o = fixtures.mutatingAdmissionPolicy();
    o.spec.mutations = [];
    kind.applyDefaults(o);
    expect(pairs(kind.validate(o))).toEqual([['FieldValueRequired', 'spec.mutations']]);
  });
});

describe('MutatingAdmissionPolicy identity and table', () => {
  it('is served as Kubernetes serves it', () => {
    expect([kind.group, kind.versions, kind.plural, kind.namespaced, kind.hasStatus]).toEqual([
      'admissionregistration.orch.io',
      ['v1', 'v1beta1', 'v1alpha1'],
      'mutatingadmissionpolicies',
      false,
      false,
    ]);
  });

  it('prints MUTATIONS and PARAMKIND', () => {
    const o = fixtures.mutatingAdmissionPolicy();
    expect(kind.tableColumns.map((c) => [c.name, c.cell(o)])).toEqual([
      ['Mutations', 1],
      ['ParamKind', '<unset>'],
    ]);
    o.spec.paramKind = { apiVersion: 'example.com/v1', kind: 'Limit' };
    expect(kind.tableColumns[1].cell(o)).toBe('example.com/v1/Limit');
  });

  it('declares matchConditions as a merge list keyed by name and variables and mutations as atomic', () => {
    const spec = kind.schema.properties!.spec.properties!;
    expect(spec.matchConditions['x-kubernetes-patch-merge-key']).toBe('name');
    expect(spec.matchConditions['x-kubernetes-list-type']).toBe('map');
    expect(spec.variables['x-kubernetes-list-type']).toBe('atomic');
    expect(spec.mutations['x-kubernetes-list-type']).toBe('atomic');
  });
});
