import { describe, expect, it } from 'vitest';
import { event } from '../../src/resources/event.js';
import { mutatingWebhookConfiguration } from '../../src/resources/mutating-webhook-configuration.js';
import { findTypeErrors } from '../../src/api/type-errors.js';
import { validatingAdmissionPolicy } from '../../src/resources/validating-admission-policy.js';
import { fixtures, pairs, type Expected } from '../resources/fixtures.js';

describe('type errors', () => {
  const rows: [string, (o: any) => void, Expected][] = [
    ['none in a valid object', () => {}, []],
    ['a number for a string', (o) => (o.spec.failurePolicy = 5), [['FieldValueTypeInvalid', 'spec.failurePolicy']]],
    ['a string for a list', (o) => (o.spec.validations = 'x'), [['FieldValueTypeInvalid', 'spec.validations']]],
    ['a list for an object', (o) => (o.spec.matchConstraints = []), [['FieldValueTypeInvalid', 'spec.matchConstraints']]],
    ['a scalar for the spec', (o) => (o.spec = true), [['FieldValueTypeInvalid', 'spec']]],
    ['an object for a string in a list item', (o) => (o.spec.validations[0].expression = {}), [['FieldValueTypeInvalid', 'spec.validations[0].expression']]],
    ['a number in a string list', (o) => (o.spec.matchConstraints.resourceRules[0].apiGroups = ['apps', 1]), [['FieldValueTypeInvalid', 'spec.matchConstraints.resourceRules[0].apiGroups[1]']]],
    ['a number as a label value', (o) => (o.metadata.labels = { a: 1 }), [['FieldValueTypeInvalid', 'metadata.labels[a]']]],
    ['a fraction for an integer', (o) => (o.metadata.generation = 1.5), [['FieldValueTypeInvalid', 'metadata.generation']]],
    ['a bad timestamp', (o) => (o.metadata.creationTimestamp = 'yesterday'), [['FieldValueTypeInvalid', 'metadata.creationTimestamp']]],
    [
      'a string for a boolean',
      (o) => (o.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'K', name: 'n', uid: 'u', controller: 'yes' }]),
      [['FieldValueTypeInvalid', 'metadata.ownerReferences[0].controller']],
    ],
    ['null is the zero value', (o) => Object.assign(o.spec, { failurePolicy: null, validations: null, paramKind: null }), []],
    ['unknown fields are not type errors', (o) => (o.spec.foo = 5), []],
  ];
  it.each(rows)('%s', (_n, mutate, want) => {
    const o = fixtures.validatingAdmissionPolicy();
    mutate(o);
    expect(pairs(findTypeErrors(o, validatingAdmissionPolicy.schema))).toEqual(want);
  });

  it('names the JSON type received and the one expected', () => {
    const o = fixtures.validatingAdmissionPolicy();
    o.spec.failurePolicy = 5;
    expect(findTypeErrors(o, validatingAdmissionPolicy.schema)[0]).toMatchObject({ value: 'integer', detail: 'must be of type string' });
  });

  it.each([
    ['timeoutSeconds beyond int32', (o: any) => (o.webhooks[0].timeoutSeconds = 2 ** 31), [['FieldValueTypeInvalid', 'webhooks[0].timeoutSeconds']]],
    ['caBundle not base64', (o: any) => (o.webhooks[0].clientConfig.caBundle = 'not base64!'), [['FieldValueTypeInvalid', 'webhooks[0].clientConfig.caBundle']]],
    ['port as a string', (o: any) => (o.webhooks[0].clientConfig.service.port = '443'), [['FieldValueTypeInvalid', 'webhooks[0].clientConfig.service.port']]],
  ] as [string, (o: any) => void, Expected][])('webhooks: %s', (_n, mutate, want) => {
    const o = fixtures.mutatingWebhookConfiguration();
    mutate(o);
    expect(pairs(findTypeErrors(o, mutatingWebhookConfiguration.schema))).toEqual(want);
  });

  it('accepts millisecond and microsecond event times, rejects others', () => {
    const o = fixtures.event();
    o.eventTime = '2026-01-02T03:04:05.123Z';
    expect(findTypeErrors(o, event.schema)).toEqual([]);
    o.eventTime = '2026-01-02 03:04:05';
    expect(pairs(findTypeErrors(o, event.schema))).toEqual([['FieldValueTypeInvalid', 'eventTime']]);
  });

  it('honours x-kubernetes-int-or-string', () => {
    const schema = { type: 'object' as const, properties: { port: { 'x-kubernetes-int-or-string': true as const } } };
    expect(findTypeErrors({ port: 80 }, schema)).toEqual([]);
    expect(findTypeErrors({ port: 'http' }, schema)).toEqual([]);
    expect(pairs(findTypeErrors({ port: true }, schema))).toEqual([['FieldValueTypeInvalid', 'port']]);
  });
});
