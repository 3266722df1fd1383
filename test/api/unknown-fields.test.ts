import { describe, expect, it } from 'vitest';
import { mutatingWebhookConfiguration } from '../../src/resources/mutating-webhook-configuration.js';
import { findUnknownFields, pruneUnknownFields, unknownFieldMessage } from '../../src/api/unknown-fields.js';
import { validatingAdmissionPolicy } from '../../src/resources/validating-admission-policy.js';
import { fixtures } from '../resources/fixtures.js';

const vap = validatingAdmissionPolicy.schema;
const paths = (o: unknown) => findUnknownFields(o, vap).map((f) => f.path);

describe('unknown fields', () => {
  it.each([
    ['none in a valid object', () => {}, []],
    ['at the top', (o: any) => (o.extra = 1), ['extra']],
    ['in spec', (o: any) => (o.spec.foo = 'x'), ['spec.foo']],
    ['in metadata', (o: any) => (o.metadata.colour = 'red'), ['metadata.colour']],
    ['in a list item', (o: any) => (o.spec.validations[0].bogus = true), ['spec.validations[0].bogus']],
    ['in a nested object', (o: any) => (o.spec.matchConstraints.resourceRules[0].verbs = ['get']), ['spec.matchConstraints.resourceRules[0].verbs']],
    ['in a label selector', (o: any) => (o.spec.matchConstraints.objectSelector = { matchLabel: {} }), ['spec.matchConstraints.objectSelector.matchLabel']],
    ['several, in document order', (o: any) => Object.assign(o.spec, { a: 1, b: 2 }), ['spec.a', 'spec.b']],
    ['label values are not fields', (o: any) => (o.metadata.labels = { anything: 'goes' }), []],
    ['nothing under managedFields[].fieldsV1 (preserved)', (o: any) => (o.metadata.managedFields = [{ manager: 'm', operation: 'Apply', fieldsV1: { 'f:spec': {} } }]), []],
  ])('%s', (_n, mutate, want) => {
    const o = fixtures.validatingAdmissionPolicy();
    mutate(o);
    expect(paths(o)).toEqual(want);
  });

  it('reports status as unknown on a kind without status', () => {
    const o = fixtures.mutatingWebhookConfiguration();
    o.status = {};
    expect(findUnknownFields(o, mutatingWebhookConfiguration.schema).map((f) => f.path)).toEqual(['status']);
  });

  it('words the warning as Kubernetes does', () => {
    expect(unknownFieldMessage({ path: 'spec.foo', kind: 'unknown' })).toBe('unknown field "spec.foo"');
  });

  it('prunes them in place and returns what went', () => {
    const o = fixtures.validatingAdmissionPolicy();
    o.spec.foo = 1;
    o.spec.validations[0].bogus = 2;
    expect(pruneUnknownFields(o, vap).map((f) => f.path)).toEqual(['spec.validations[0].bogus', 'spec.foo']);
    expect(o).toEqual(fixtures.validatingAdmissionPolicy());
  });

  it('stops at x-kubernetes-preserve-unknown-fields', () => {
    const schema = { type: 'object' as const, properties: { spec: { type: 'object' as const, 'x-kubernetes-preserve-unknown-fields': true as const, properties: {} } } };
    expect(findUnknownFields({ spec: { anything: { at: 'all' } }, other: 1 }, schema).map((f) => f.path)).toEqual(['other']);
  });
});
