import { describe, expect, it } from 'vitest';
import { PatchError } from '../../src/patch/errors.js';
import { FieldSet, formatPath } from '../../src/patch/field-set.js';
import { compare, toFieldSet } from '../../src/patch/field-walk.js';
import { applyConfig, recordUpdate, type WriteScope } from '../../src/patch/managed-fields.js';
import { kinds } from '../../src/resources/kinds.js';
import type { KubeObject } from '../../src/api/types.js';

const vapKind = kinds.find((k) => k.kind === 'ValidatingAdmissionPolicy')!;
const scope: WriteScope = { schema: vapKind.schema, apiVersion: 'admissionregistration.orch.io/v1', hasStatus: true, now: '2025-01-01T00:00:00Z' };
const statusScope: WriteScope = { ...scope, subresource: 'status' };

const vap = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'admissionregistration.orch.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'p', ...metadata },
  spec,
});
const mc = (name: string, expression = 'true') => ({ name, expression });
const entry = (o: KubeObject, manager: string) => (o.metadata.managedFields as any[]).find((e) => e.manager === manager);
const conflictOf = (fn: () => unknown): PatchError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof PatchError) return err;
    throw err;
  }
  throw new Error('no conflict');
};

/** Applies and stores the managedFields on the result, as the handler does. */
function apply(live: KubeObject | undefined, config: KubeObject, manager: string, force = false, s = scope): KubeObject {
  const { obj, managedFields } = applyConfig(live, structuredClone(config), manager, force, s);
  obj.metadata.managedFields = managedFields;
  return obj;
}
function update(live: KubeObject | undefined, next: KubeObject, manager: string, s = scope): KubeObject {
  const out = structuredClone(next);
  const mf = recordUpdate(live, out, manager, s);
  if (mf) out.metadata.managedFields = mf;
  else delete out.metadata.managedFields;
  return out;
}

describe('field sets', () => {
  it('FieldsV1 round trip, `.` marking members with children', () => {
    const v1 = { 'f:spec': { 'f:matchConditions': { 'k:{"name":"a"}': { '.': {}, 'f:expression': {}, 'f:name': {} } } } };
    expect(FieldSet.fromFieldsV1(v1).toFieldsV1()).toEqual(v1);
  });

  it('paths print as Kubernetes prints them in conflicts', () => {
    expect(formatPath(['f:spec', 'k:{"name":"a"}', 'f:expression'])).toBe('.spec[name="a"].expression');
    expect(formatPath(['f:metadata', 'f:finalizers', 'v:"x"'])).toBe('.metadata.finalizers[="x"]');
  });

  it('toFieldSet: keyed items are members, set values are members, atomic lists are leaves', () => {
    const set = toFieldSet(vap({ matchConditions: [mc('a')], validations: [{ expression: 'x' }] }, { finalizers: ['f'] }), vapKind.schema);
    expect(set.toFieldsV1()).toEqual({
      'f:apiVersion': {},
      'f:kind': {},
      'f:metadata': { 'f:finalizers': { 'v:"f"': {} }, 'f:name': {} },
      'f:spec': { 'f:matchConditions': { 'k:{"name":"a"}': { '.': {}, 'f:expression': {}, 'f:name': {} } }, 'f:validations': {} },
    });
  });

  it('compare: added, modified and removed leaves and items', () => {
    const c = compare(vap({ failurePolicy: 'Fail', matchConditions: [mc('a'), mc('b')] }), vap({ failurePolicy: 'Ignore', matchConditions: [mc('a'), mc('c')] }), vapKind.schema);
    expect(c.modified.paths().map(formatPath)).toEqual(['.spec.failurePolicy']);
    expect(c.added.paths().map(formatPath)).toEqual(['.spec.matchConditions[name="c"]', '.spec.matchConditions[name="c"].expression', '.spec.matchConditions[name="c"].name']);
    expect(c.removed.paths().map(formatPath)).toContain('.spec.matchConditions[name="b"]');
  });
});

describe('server-side apply', () => {
  const config = vap({ failurePolicy: 'Fail', matchConditions: [mc('a')] }, { labels: { team: 'x' } });

  it('creates from nothing and records one Apply entry with the configuration fields (system fields never owned)', () => {
    const out = apply(undefined, config, 'alice');
    expect(out.spec).toEqual(config.spec);
    expect(out.metadata.managedFields).toEqual([
      {
        manager: 'alice',
        operation: 'Apply',
        apiVersion: 'admissionregistration.orch.io/v1',
        time: '2025-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:team': {} } },
          'f:spec': { 'f:failurePolicy': {}, 'f:matchConditions': { 'k:{"name":"a"}': { '.': {}, 'f:expression': {}, 'f:name': {} } } },
        },
      },
    ]);
  });

  it('two managers applying the same value share the field without conflict', () => {
    const live = apply(undefined, config, 'alice');
    const out = apply(live, vap({ failurePolicy: 'Fail' }), 'bob');
    expect(entry(out, 'alice').fieldsV1['f:spec']['f:failurePolicy']).toEqual({});
    expect(entry(out, 'bob').fieldsV1['f:spec']['f:failurePolicy']).toEqual({});
  });

  it('a different value for a field another applier owns is a conflict naming the manager and field', () => {
    const live = apply(undefined, config, 'alice');
    const err = conflictOf(() => apply(live, vap({ failurePolicy: 'Ignore' }), 'bob'));
    expect(err.code).toBe('Conflict');
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.failurePolicy');
    expect(err.conflicts.map((c) => c.path)).toEqual(['.spec.failurePolicy']);
  });

  it('several conflicts are grouped by manager', () => {
    let live = apply(undefined, vap({ failurePolicy: 'Fail' }), 'alice');
    live = update(live, vap({ failurePolicy: 'Fail', matchConditions: [mc('a')] }), 'kubectl-edit');
    const err = conflictOf(() => apply(live, vap({ failurePolicy: 'Ignore', matchConditions: [mc('a', 'false')] }), 'bob'));
    expect(err.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "alice"\n- .spec.failurePolicy\nconflicts with "kubectl-edit" using admissionregistration.orch.io/v1\n- .spec.matchConditions[name="a"].expression',
    );
  });

  it('force takes the field from its owner', () => {
    const live = apply(undefined, config, 'alice');
    const out = apply(live, vap({ failurePolicy: 'Ignore' }), 'bob', true);
    expect(out.spec).toMatchObject({ failurePolicy: 'Ignore' });
    expect(entry(out, 'alice').fieldsV1['f:spec']['f:failurePolicy']).toBeUndefined();
    expect(entry(out, 'bob').fieldsV1['f:spec']['f:failurePolicy']).toEqual({});
  });

  it('fields a manager stops applying are removed when no one else owns them', () => {
    const live = apply(undefined, vap({ failurePolicy: 'Fail', matchConditions: [mc('a'), mc('b')] }, { labels: { x: '1' } }), 'alice');
    const out = apply(live, vap({ matchConditions: [mc('a')] }), 'alice');
    expect(out.spec).toEqual({ matchConditions: [mc('a')] });
    expect(out.metadata.labels).toBeUndefined();
  });

  it('…and kept when another manager owns them', () => {
    let live = apply(undefined, vap({ failurePolicy: 'Fail', matchConditions: [mc('a'), mc('b')] }), 'alice');
    live = apply(live, vap({ matchConditions: [mc('b')] }), 'bob');
    const out = apply(live, vap({ matchConditions: [mc('a')] }), 'alice');
    expect(out.spec).toEqual({ matchConditions: [mc('a'), mc('b')] });
  });

  it('an Update that changes an applied field takes it over (updates are always forced)', () => {
    const live = apply(undefined, config, 'alice');
    const out = update(live, { ...live, spec: { ...(live.spec as object), failurePolicy: 'Ignore' } }, 'kubectl-edit');
    expect(entry(out, 'kubectl-edit').fieldsV1).toEqual({ 'f:spec': { 'f:failurePolicy': {} } });
    expect(entry(out, 'alice').fieldsV1['f:spec']['f:failurePolicy']).toBeUndefined();
    const err = conflictOf(() => apply(out, config, 'alice'));
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-edit" using admissionregistration.orch.io/v1: .spec.failurePolicy');
  });

  it('an Update create owns everything it set; maps that appear are members', () => {
    const out = update(undefined, vap({ failurePolicy: 'Fail' }, { labels: { a: 'b' } }), 'kubectl-create');
    expect(entry(out, 'kubectl-create')).toMatchObject({
      operation: 'Update',
      apiVersion: 'admissionregistration.orch.io/v1',
      fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } }, 'f:spec': { 'f:failurePolicy': {} } },
    });
  });

  it('the main resource never owns status; /status owns only status, under its own entry', () => {
    const live = update(undefined, vap({ failurePolicy: 'Fail' }), 'creator');
    const withStatus = update({ ...live }, { ...live, status: { observedGeneration: 1 } }, 'creator');
    expect(entry(withStatus, 'creator').fieldsV1['f:status']).toBeUndefined();
    const st = update(live, { ...live, spec: { failurePolicy: 'Ignore' }, status: { observedGeneration: 1 } }, 'controller', statusScope);
    expect(entry(st, 'controller')).toMatchObject({ subresource: 'status', fieldsV1: { 'f:status': { 'f:observedGeneration': {} } } });
  });

  it('managedFields: [{}] in a request resets tracking; [] keeps the live entries', () => {
    const live = update(undefined, vap({ failurePolicy: 'Fail' }), 'creator');
    expect(recordUpdate(live, { ...live, metadata: { ...live.metadata, managedFields: [{}] } }, 'x', scope)).toBeUndefined();
    const kept = recordUpdate(live, { ...live, metadata: { ...live.metadata, managedFields: [] } }, 'x', scope)!;
    expect(kept.map((e) => e.manager)).toEqual(['creator']);
  });

  it('an apply configuration may not carry managedFields', () => {
    expect(conflictOf(() => applyConfig(undefined, vap({}, { managedFields: [] }), 'a', false, scope)).code).toBe('BadPatch');
  });
});
