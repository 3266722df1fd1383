import { describe, expect, it } from 'vitest';
import { FieldPath } from '../../src/api/field-errors.js';
import { listMetaSchema, objectMetaSchema, validateFieldManager, validateObjectMeta, validateObjectMetaUpdate } from '../../src/resources/metadata.js';
import type { ObjectMeta } from '../../src/api/types.js';
import { pairs, type Expected } from './fixtures.js';

const M = 'metadata';

describe('ObjectMeta on create', () => {
  const rows: [string, ObjectMeta, boolean, Expected][] = [
    ['a valid cluster-scoped name', { name: 'policy.example.com' }, false, []],
    ['a valid namespaced object', { name: 'web', namespace: 'default' }, true, []],
    ['name or generateName is required', {}, false, [['FieldValueRequired', `${M}.name`]]],
    ['generateName alone is enough (the store completes the name)', { generateName: 'web-' }, false, []],
    ['generateName is checked as a prefix', { generateName: 'Web-' }, false, [['FieldValueInvalid', `${M}.generateName`]]],
    ['name is a DNS subdomain: lowercase', { name: 'Web' }, false, [['FieldValueInvalid', `${M}.name`]]],
    ['name is a DNS subdomain: no trailing dash', { name: 'web-' }, false, [['FieldValueInvalid', `${M}.name`]]],
    ['name is a DNS subdomain: at most 253', { name: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}` }, false, [['FieldValueInvalid', `${M}.name`]]],
    ['name of 253 characters is fine', { name: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` }, false, []],
    ['namespaced kinds need a namespace', { name: 'web' }, true, [['FieldValueRequired', `${M}.namespace`]]],
    ['namespace is a DNS label', { name: 'web', namespace: 'a.b' }, true, [['FieldValueInvalid', `${M}.namespace`]]],
    ['cluster-scoped kinds take no namespace', { name: 'web', namespace: 'default' }, false, [['FieldValueForbidden', `${M}.namespace`]]],
    ['generation is not negative', { name: 'web', generation: -1 }, false, [['FieldValueInvalid', `${M}.generation`]]],
    ['labels: keys are qualified names', { name: 'web', labels: { 'bad key': 'v' } }, false, [['FieldValueInvalid', `${M}.labels`]]],
    ['labels: prefixed keys', { name: 'web', labels: { 'orch.io/part-of': 'demo', 'app.kubernetes.io/name': 'x' } }, false, []],
    ['labels: prefix a DNS subdomain', { name: 'web', labels: { 'Orch.io/x': 'v' } }, false, [['FieldValueInvalid', `${M}.labels`]]],
    ['labels: name part at most 63', { name: 'web', labels: { [`a/${'k'.repeat(64)}`]: 'v' } }, false, [['FieldValueInvalid', `${M}.labels`]]],
    ['labels: values at most 63', { name: 'web', labels: { k: 'v'.repeat(64) } }, false, [['FieldValueInvalid', `${M}.labels`]]],
    ['labels: values in the label charset', { name: 'web', labels: { k: 'a b' } }, false, [['FieldValueInvalid', `${M}.labels`]]],
    ['labels: empty values are fine', { name: 'web', labels: { k: '' } }, false, []],
    ['annotations: keys are qualified names', { name: 'web', annotations: { 'a b': 'v' } }, false, [['FieldValueInvalid', `${M}.annotations`]]],
    ['annotations: key case does not matter', { name: 'web', annotations: { 'Orch.IO/Note': 'v' } }, false, []],
    ['annotations: values are free text', { name: 'web', annotations: { note: 'any text / at all!' } }, false, []],
    ['annotations: at most 256 KiB in total', { name: 'web', annotations: { a: 'x'.repeat(262144), b: '' } }, false, [['FieldValueTooLong', `${M}.annotations`]]],
    ['annotations: exactly 256 KiB is fine', { name: 'web', annotations: { a: 'x'.repeat(262143) } }, false, []],
    ['finalizers: qualified names', { name: 'web', finalizers: ['example.com/a b'] }, false, [['FieldValueInvalid', `${M}.finalizers`]]],
    ['finalizers: bare names are fine on non-core kinds', { name: 'web', finalizers: ['cleanup'] }, false, []],
    ['finalizers: duplicates are accepted, as Kubernetes accepts them', { name: 'web', finalizers: ['example.com/x', 'example.com/x'] }, false, []],
    ['finalizers: orphan and foregroundDeletion exclude each other', { name: 'web', finalizers: ['orphan', 'foregroundDeletion'] }, false, [['FieldValueInvalid', `${M}.finalizers`]]],
    [
      'ownerReferences: apiVersion, kind, name and uid required',
      { name: 'web', ownerReferences: [{ apiVersion: '', kind: '', name: '', uid: '' }] },
      false,
      [
        ['FieldValueInvalid', `${M}.ownerReferences.apiVersion`],
        ['FieldValueInvalid', `${M}.ownerReferences.kind`],
        ['FieldValueInvalid', `${M}.ownerReferences.name`],
        ['FieldValueInvalid', `${M}.ownerReferences.uid`],
      ],
    ],
    [
      'ownerReferences: at most one controller',
      {
        name: 'web',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'b', uid: '2', controller: true },
        ],
      },
      false,
      [['FieldValueInvalid', `${M}.ownerReferences`]],
    ],
    ['ownerReferences: one controller is fine', { name: 'web', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true }] }, false, []],
    ['ownerReferences: core Events cannot own', { name: 'web', ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: '1' }] }, false, [['FieldValueInvalid', `${M}.ownerReferences`]]],
    ['managedFields: operation Apply or Update', { name: 'web', managedFields: [{ manager: 'kubectl', operation: 'Patch' }] }, false, [['FieldValueInvalid', `${M}.managedFields[0].operation`]]],
    [
      'managedFields: fieldsType FieldsV1',
      { name: 'web', managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV2' }] },
      false,
      [['FieldValueInvalid', `${M}.managedFields[0].fieldsType`]],
    ],
    ['managedFields: manager printable', { name: 'web', managedFields: [{ manager: 'a\u0007', operation: 'Update' }] }, false, [['FieldValueInvalid', `${M}.managedFields[0].manager`]]],
    ['managedFields: manager at most 128', { name: 'web', managedFields: [{ manager: 'm'.repeat(129), operation: 'Update' }] }, false, [['FieldValueTooLong', `${M}.managedFields[0].manager`]]],
  ];
  it.each(rows)('%s', (_n, meta, namespaced, want) => expect(pairs(validateObjectMeta(meta, namespaced))).toEqual(want));

  it('a DNS-label kind rejects dotted names and generateNames', () => {
    expect(pairs(validateObjectMeta({ generateName: 'a.b-' }, false, 'dns-label'))).toEqual([['FieldValueInvalid', `${M}.generateName`]]);
  });

  it('reports a non-printable field manager character at its byte offset', () => {
    expect(validateFieldManager('é\u0001', FieldPath.root('fieldManager'))[0].detail).toBe('invalid character U+0001 (at position 2)');
  });
});

describe('ObjectMeta on update', () => {
  const old: ObjectMeta = { name: 'web', namespace: 'default', uid: 'u-1', creationTimestamp: '2026-01-01T00:00:00Z', generation: 3, finalizers: ['example.com/a'] };
  const rows: [string, Partial<ObjectMeta>, Expected][] = [
    ['unchanged', {}, []],
    ['labels may change', { labels: { a: 'b' } }, []],
    ['name is immutable', { name: 'other' }, [['FieldValueInvalid', `${M}.name`]]],
    ['namespace is immutable', { namespace: 'other' }, [['FieldValueInvalid', `${M}.namespace`]]],
    ['uid is immutable', { uid: 'u-2' }, [['FieldValueInvalid', `${M}.uid`]]],
    ['creationTimestamp is immutable', { creationTimestamp: '2026-02-01T00:00:00Z' }, [['FieldValueInvalid', `${M}.creationTimestamp`]]],
    ['deletionTimestamp cannot be set by an update', { deletionTimestamp: '2026-02-01T00:00:00Z' }, [['FieldValueInvalid', `${M}.deletionTimestamp`]]],
    ['deletionGracePeriodSeconds is immutable', { deletionGracePeriodSeconds: 30 }, [['FieldValueInvalid', `${M}.deletionGracePeriodSeconds`]]],
    ['generation never goes back', { generation: 2 }, [['FieldValueInvalid', `${M}.generation`]]],
    ['finalizers may be added while not deleting', { finalizers: ['example.com/a', 'example.com/b'] }, []],
  ];
  it.each(rows)('%s', (_n, change, want) => expect(pairs(validateObjectMetaUpdate({ ...old, ...change }, old))).toEqual(want));

  it('no finalizer may be added to an object being deleted; removing is fine', () => {
    const deleting = { ...old, deletionTimestamp: '2026-02-01T00:00:00Z' };
    expect(pairs(validateObjectMetaUpdate({ ...deleting, finalizers: ['example.com/a', 'example.com/b'] }, deleting))).toEqual([['FieldValueForbidden', `${M}.finalizers`]]);
    expect(pairs(validateObjectMetaUpdate({ ...deleting, finalizers: [] }, deleting))).toEqual([]);
  });
});

describe('ObjectMeta and ListMeta schemas', () => {
  it('declares labels and annotations as string maps, finalizers as a set, ownerReferences merged by uid', () => {
    const p = objectMetaSchema.properties!;
    expect([p.labels.additionalProperties?.type, p.annotations.additionalProperties?.type]).toEqual(['string', 'string']);
    expect([p.finalizers['x-kubernetes-list-type'], p.finalizers['x-kubernetes-patch-strategy']]).toEqual(['set', 'merge']);
    expect([p.ownerReferences['x-kubernetes-list-map-keys'], p.ownerReferences['x-kubernetes-patch-merge-key']]).toEqual([['uid'], 'uid']);
    expect(p.managedFields['x-kubernetes-list-type']).toBe('atomic');
    expect(objectMetaSchema.refName).toBe('io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  });

  it('ListMeta carries continue and remainingItemCount', () => {
    expect(Object.keys(listMetaSchema.properties!)).toEqual(expect.arrayContaining(['continue', 'remainingItemCount', 'resourceVersion']));
  });
});
