import { describe, expect, it } from 'vitest';
import { validatingAdmissionPolicy as kind } from '../../src/resources/validating-admission-policy.js';
import { fixtures, pairs, repeat, rowRunner, type Row } from './fixtures.js';

const run = rowRunner(kind, fixtures.validatingAdmissionPolicy);
const S = 'spec';
const RULE = { operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] };

describe('ValidatingAdmissionPolicy defaults', () => {
  it('fills failurePolicy and matchConstraints', () => {
    const o = fixtures.validatingAdmissionPolicy();
    kind.applyDefaults(o);
    expect(o.spec.failurePolicy).toBe('Fail');
    expect(o.spec.matchConstraints).toMatchObject({ matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} });
    expect(o.spec.matchConstraints.resourceRules[0].scope).toBe('*');
  });
});

describe('ValidatingAdmissionPolicy validation', () => {
  const rows: Row[] = [
    ['the fixture is valid', () => {}, []],
    ['failurePolicy must be Ignore or Fail', (o) => (o.spec.failurePolicy = 'Maybe'), [['FieldValueNotSupported', `${S}.failurePolicy`]]],
    ['matchConstraints is required', (o) => delete o.spec.matchConstraints, [['FieldValueRequired', `${S}.matchConstraints`]]],
    ['matchConstraints needs a resourceRule', (o) => (o.spec.matchConstraints.resourceRules = []), [['FieldValueRequired', `${S}.matchConstraints.resourceRules`]]],
    ['matchConstraints may match DELETE', (o) => (o.spec.matchConstraints.resourceRules[0].operations = ['DELETE']), []],
    [
      'rules covering the policy kinds are accepted (exempted at admission, as Kubernetes does)',
      (o) => (o.spec.matchConstraints.resourceRules[0] = { ...RULE, apiGroups: ['admissionregistration.orch.io'], resources: ['validatingadmissionpolicies'] }),
      [],
    ],
    [
      'validations and auditAnnotations may not both be empty',
      (o) => {
        o.spec.validations = [];
        delete o.spec.auditAnnotations;
      },
      [
        ['FieldValueRequired', `${S}.validations`],
        ['FieldValueRequired', `${S}.auditAnnotations`],
      ],
    ],
    ['auditAnnotations alone are enough', (o) => delete o.spec.validations, []],
    ['validations alone are enough', (o) => delete o.spec.auditAnnotations, []],
    ['validations: expression required', (o) => (o.spec.validations[0].expression = ''), [['FieldValueRequired', `${S}.validations[0].expression`]]],
    ['validations: message not blank', (o) => (o.spec.validations[0].message = '  '), [['FieldValueInvalid', `${S}.validations[0].message`]]],
    ['validations: message without line breaks', (o) => (o.spec.validations[0].message = 'a\nb'), [['FieldValueInvalid', `${S}.validations[0].message`]]],
    ['validations: messageExpression not blank', (o) => (o.spec.validations[0].messageExpression = ' '), [['FieldValueInvalid', `${S}.validations[0].messageExpression`]]],
    ...(['Forbidden', 'Invalid', 'RequestEntityTooLarge'] as const).map((r): Row => [`validations: reason ${r} is supported`, (o) => (o.spec.validations[0].reason = r), []]),
    // The API docs list Unauthorized too, but Kubernetes' validation rejects it.
    ['validations: reason Unauthorized is rejected', (o) => (o.spec.validations[0].reason = 'Unauthorized'), [['FieldValueNotSupported', `${S}.validations[0].reason`]]],
    ['validations: reason NotFound is rejected', (o) => (o.spec.validations[0].reason = 'NotFound'), [['FieldValueNotSupported', `${S}.validations[0].reason`]]],
    ['auditAnnotations: keys unique', (o) => o.spec.auditAnnotations.push({ key: 'high-replicas', valueExpression: "'x'" }), [['FieldValueDuplicate', `${S}.auditAnnotations[1].key`]]],
    ['auditAnnotations: "<name>/<key>" is a qualified name', (o) => (o.spec.auditAnnotations[0].key = 'bad key'), [['FieldValueInvalid', `${S}.auditAnnotations[0].key`]]],
    ['auditAnnotations: valueExpression required', (o) => (o.spec.auditAnnotations[0].valueExpression = ' '), [['FieldValueRequired', `${S}.auditAnnotations[0].valueExpression`]]],
    [
      'auditAnnotations: valueExpression at most 5 KiB (reported as Required, like Kubernetes)',
      (o) => (o.spec.auditAnnotations[0].valueExpression = `'${'x'.repeat(5 * 1024)}'`),
      [['FieldValueRequired', `${S}.auditAnnotations[0].valueExpression`]],
    ],
    ['auditAnnotations: at most 20', (o) => (o.spec.auditAnnotations = repeat(21, (i) => ({ key: `k${i}`, valueExpression: "'v'" }))), [['FieldValueInvalid', `${S}.auditAnnotations`]]],
    ['matchConditions: at most 64', (o) => (o.spec.matchConditions = repeat(65, (i) => ({ name: `c${i}`, expression: 'true' }))), [['FieldValueTooMany', `${S}.matchConditions`]]],
    ['matchConditions: names unique', (o) => o.spec.matchConditions.push({ name: 'not-system', expression: 'true' }), [['FieldValueDuplicate', `${S}.matchConditions[1].name`]]],
    ['matchConditions: names qualified', (o) => (o.spec.matchConditions[0].name = '-x-'), [['FieldValueInvalid', `${S}.matchConditions[0].name`]]],
    ['paramKind: apiVersion required', (o) => (o.spec.paramKind.apiVersion = ''), [['FieldValueRequired', `${S}.paramKind.apiVersion`]]],
    ['paramKind: apiVersion parses', (o) => (o.spec.paramKind.apiVersion = 'a/b/c'), [['FieldValueInvalid', `${S}.paramKind.apiVersion`]]],
    ['paramKind: group a DNS subdomain', (o) => (o.spec.paramKind.apiVersion = 'Example.com/v1'), [['FieldValueInvalid', `${S}.paramKind.apiVersion`]]],
    ['paramKind: version required', (o) => (o.spec.paramKind.apiVersion = 'example.com/'), [['FieldValueInvalid', `${S}.paramKind.apiVersion`]]],
    ['paramKind: kind a DNS-1035 label once lower-cased', (o) => (o.spec.paramKind.kind = 'Replica_Limit'), [['FieldValueInvalid', `${S}.paramKind.kind`]]],
    ['paramKind: core group may be omitted', (o) => (o.spec.paramKind = { apiVersion: 'v1', kind: 'ConfigMap' }), []],
    ['variables: name required', (o) => (o.spec.variables[0].name = ''), [['FieldValueRequired', `${S}.variables[0].name`]]],
    ['variables: reserved words are not identifiers', (o) => (o.spec.variables[0].name = 'namespace'), [['FieldValueInvalid', `${S}.variables[0].name`]]],
    ['variables: expression required', (o) => (o.spec.variables[0].expression = ''), [['FieldValueRequired', `${S}.variables[0].expression`]]],
    ['variables: a variable may not reference a later one', (o) => o.spec.variables.reverse(), [['FieldValueInvalid', `${S}.variables[0].expression`]]],
    ['variables: a variable may not reference itself', (o) => (o.spec.variables[0].expression = 'variables.replicas'), [['FieldValueInvalid', `${S}.variables[0].expression`]]],
    [
      'matchResources rules: resources "*" beside a plain resource',
      (o) => (o.spec.matchConstraints.resourceRules[0].resources = ['*', 'pods']),
      [['FieldValueInvalid', `${S}.matchConstraints.resourceRules[0].resources`]],
    ],
  ];
  it.each(rows)('%s', run);
});

describe('ValidatingAdmissionPolicy status', () => {
  const status = (s: unknown) => {
    const o = fixtures.validatingAdmissionPolicy();
    o.status = s;
    return pairs(kind.validateStatusUpdate(o));
  };
  it.each([
    ['valid', { observedGeneration: 1, typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: 'w' }] } }, []],
    ['warning required', { typeChecking: { expressionWarnings: [{ fieldRef: 'spec.x' }] } }, [['FieldValueRequired', 'status.typeChecking.expressionWarnings[0].warning']]],
    ['fieldRef required', { typeChecking: { expressionWarnings: [{ warning: 'w' }] } }, [['FieldValueRequired', 'status.typeChecking.expressionWarnings[0].fieldRef']]],
    [
      'conditions unique by type, with status, time and reason',
      {
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Ok', message: '' },
          { type: 'Ready', status: 'Yes', reason: '1bad', message: '' },
        ],
      },
      [
        ['FieldValueDuplicate', 'status.conditions[1].type'],
        ['FieldValueNotSupported', 'status.conditions[1].status'],
        ['FieldValueRequired', 'status.conditions[1].lastTransitionTime'],
        ['FieldValueInvalid', 'status.conditions[1].reason'],
      ],
    ],
  ])('%s', (_n, s, want) => expect(status(s)).toEqual(want));

  it('has a status subresource and publishes its schema', () => {
    expect(kind.hasStatus).toBe(true);
    expect(Object.keys(kind.schema.properties!.status.properties!)).toEqual(['conditions', 'observedGeneration', 'typeChecking']);
  });
});

describe('ValidatingAdmissionPolicy table and schema', () => {
  it('prints VALIDATIONS and PARAMKIND', () => {
    expect(kind.tableColumns.map((c) => [c.name, c.cell(fixtures.validatingAdmissionPolicy())])).toEqual([
      ['Validations', 1],
      ['ParamKind', 'example.com/v1/ReplicaLimit'],
    ]);
  });

  it('declares matchConditions and variables as merge lists keyed by name, validations atomic', () => {
    const spec = kind.schema.properties!.spec.properties!;
    for (const f of ['matchConditions', 'variables']) {
      expect([spec[f]['x-kubernetes-patch-strategy'], spec[f]['x-kubernetes-patch-merge-key'], spec[f]['x-kubernetes-list-map-keys']]).toEqual(['merge', 'name', ['name']]);
    }
    expect(spec.validations['x-kubernetes-list-type']).toBe('atomic');
    expect(spec.auditAnnotations['x-kubernetes-list-type']).toBe('atomic');
  });
});
