import { describe, expect, it } from 'vitest';
import { validatingAdmissionPolicyBinding as kind } from '../../src/resources/validating-admission-policy-binding.js';
import { fixtures, rowRunner, type Row } from './fixtures.js';

const run = rowRunner(kind, fixtures.validatingAdmissionPolicyBinding);

describe('ValidatingAdmissionPolicyBinding defaults', () => {
  it('fills matchResources; v1 does not default parameterNotFoundAction', () => {
    const o = fixtures.validatingAdmissionPolicyBinding();
    delete o.spec.paramRef.parameterNotFoundAction;
    kind.applyDefaults(o);
    expect(o.spec.matchResources).toMatchObject({ matchPolicy: 'Equivalent', objectSelector: {}, namespaceSelector: { matchLabels: { env: 'test' } } });
    expect(o.spec.paramRef.parameterNotFoundAction).toBeUndefined();
  });
});

describe('ValidatingAdmissionPolicyBinding validation', () => {
  const rows: Row[] = [
    ['the fixture is valid', () => {}, []],
    ['policyName is required', (o) => (o.spec.policyName = ''), [['FieldValueRequired', 'spec.policyName']]],
    ['policyName is a DNS subdomain', (o) => (o.spec.policyName = 'UPPER'), [['FieldValueInvalid', 'spec.policyName']]],
    ['validationActions is required', (o) => delete o.spec.validationActions, [['FieldValueRequired', 'spec.validationActions']]],
    ['validationActions may not be empty', (o) => (o.spec.validationActions = []), [['FieldValueRequired', 'spec.validationActions']]],
    ['validationActions: Deny, Warn or Audit', (o) => (o.spec.validationActions = ['Deny', 'Log']), [['FieldValueNotSupported', 'spec.validationActions[1]']]],
    ['validationActions: unique', (o) => (o.spec.validationActions = ['Audit', 'Audit']), [['FieldValueDuplicate', 'spec.validationActions[1]']]],
    ['validationActions: not both Deny and Warn', (o) => (o.spec.validationActions = ['Deny', 'Warn']), [['FieldValueInvalid', 'spec.validationActions']]],
    ['validationActions: Warn and Audit together are fine', (o) => (o.spec.validationActions = ['Warn', 'Audit']), []],
    ['paramRef: parameterNotFoundAction required', (o) => delete o.spec.paramRef.parameterNotFoundAction, [['FieldValueRequired', 'spec.paramRef.parameterNotFoundAction']]],
    ['paramRef: name may not be ".."', (o) => (o.spec.paramRef.name = '..'), [['FieldValueInvalid', 'spec.paramRef.name']]],
    [
      'matchResources: selector values are label values',
      (o) => (o.spec.matchResources.objectSelector = { matchExpressions: [{ key: 'a', operator: 'In', values: ['not valid!'] }] }),
      [['FieldValueInvalid', 'spec.matchResources.objectSelector.matchExpressions[0].values[0]']],
    ],
    ['matchResources: a binding may match DELETE', (o) => (o.spec.matchResources.resourceRules = [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }]), []],
  ];
  it.each(rows)('%s', run);
});

describe('ValidatingAdmissionPolicyBinding schema and table', () => {
  it('validationActions is a set', () => {
    expect(kind.schema.properties!.spec.properties!.validationActions['x-kubernetes-list-type']).toBe('set');
  });

  it('prints POLICYNAME and PARAMREF', () => {
    expect(kind.tableColumns.map((c) => [c.name, c.cell(fixtures.validatingAdmissionPolicyBinding())])).toEqual([
      ['PolicyName', 'replicas.example.com'],
      ['ParamRef', 'default/limit'],
    ]);
  });
});
