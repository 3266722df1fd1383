import { describe, expect, it } from 'vitest';
import { validateObjectMeta } from '../../src/resources/metadata.js';
import { namespace as kind } from '../../src/resources/namespace.js';
import { fixtures, pairs, rowRunner, type Row } from './fixtures.js';

const run = rowRunner(kind, fixtures.namespace);

describe('Namespace defaults and preparation', () => {
  it('defaults status.phase to Active and labels the namespace with its name', () => {
    const o = fixtures.namespace();
    o.metadata.labels = { team: 'a' };
    kind.applyDefaults(o);
    expect(o.status).toEqual({ phase: 'Active' });
    expect(o.metadata.labels).toEqual({ team: 'a', 'kubernetes.io/metadata.name': 'team-a' });
  });

  it('keeps a Terminating phase', () => {
    const o = fixtures.namespace();
    o.status = { phase: 'Terminating' };
    kind.applyDefaults(o);
    expect(o.status.phase).toBe('Terminating');
  });

  it('starts Active on create whatever the client sent', () => {
    const o = fixtures.namespace();
    o.status = { phase: 'Terminating' };
    kind.prepareForCreate(o);
    expect(o.status).toEqual({ phase: 'Active' });
  });

  it('keeps the stored spec.finalizers and status on a main-resource update', () => {
    const old = { ...fixtures.namespace(), spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
    const o = { ...fixtures.namespace(), spec: { finalizers: [] }, status: { phase: 'Terminating' } };
    kind.prepareForUpdate(o, old);
    expect([o.spec, o.status]).toEqual([{ finalizers: ['kubernetes'] }, { phase: 'Active' }]);
  });
});

describe('Namespace validation', () => {
  const rows: Row[] = [
    ['the fixture is valid', () => {}, []],
    ['spec.finalizers: the standard kubernetes finalizer', (o) => (o.spec = { finalizers: ['kubernetes'] }), []],
    ['spec.finalizers: a domain-qualified finalizer', (o) => (o.spec = { finalizers: ['example.com/cleanup'] }), []],
    ['spec.finalizers: a bare non-standard name', (o) => (o.spec = { finalizers: ['cleanup'] }), [['FieldValueInvalid', 'spec.finalizers']]],
    ['spec.finalizers: qualified names', (o) => (o.spec = { finalizers: ['example.com/a b'] }), [['FieldValueInvalid', 'spec.finalizers']]],
    ['metadata.finalizers: a bare non-standard name', (o) => (o.metadata.finalizers = ['cleanup']), [['FieldValueInvalid', 'metadata.finalizers']]],
  ];
  it.each(rows)('%s', run);

  it('names are DNS labels: no dots', () => {
    expect(kind.nameFormat).toBe('dns-label');
    expect(pairs(validateObjectMeta({ name: 'team.a' }, false, kind.nameFormat))).toEqual([['FieldValueInvalid', 'metadata.name']]);
  });

  it.each([
    ['Active without deletionTimestamp', {}, 'Active', []],
    ['Terminating without deletionTimestamp', {}, 'Terminating', [['FieldValueInvalid', 'status.Phase']]],
    ['Terminating once deleted', { deletionTimestamp: '2026-01-01T00:00:00Z' }, 'Terminating', []],
    ['Active once deleted', { deletionTimestamp: '2026-01-01T00:00:00Z' }, 'Active', [['FieldValueInvalid', 'status.Phase']]],
  ])('status update: %s', (_n, meta, phase, want) => {
    const o = { ...fixtures.namespace(), status: { phase } };
    Object.assign(o.metadata, meta);
    expect(pairs(kind.validateStatusUpdate(o))).toEqual(want);
  });
});

describe('Namespace identity, table and field selectors', () => {
  it('is core v1, cluster-scoped, short name ns, with status', () => {
    expect([kind.group, kind.versions, kind.plural, kind.namespaced, kind.shortNames, kind.hasStatus]).toEqual(['', ['v1'], 'namespaces', false, ['ns'], true]);
  });

  it('prints STATUS and selects by status.phase and name', () => {
    const o = { ...fixtures.namespace(), status: { phase: 'Active' } };
    expect(kind.tableColumns.map((c) => [c.name, c.cell(o)])).toEqual([['Status', 'Active']]);
    expect([kind.fieldSelectors['status.phase'](o), kind.fieldSelectors.name(o)]).toEqual(['Active', 'team-a']);
  });
});
