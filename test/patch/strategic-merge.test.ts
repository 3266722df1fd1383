import { describe, expect, it } from 'vitest';
import { PatchError } from '../../src/patch/errors.js';
import { applyStrategicMergePatch } from '../../src/patch/strategic-merge.js';
import { kinds } from '../../src/resources/kinds.js';
import type { Schema } from '../../src/api/schema.js';

const schemaOf = (kind: string): Schema => kinds.find((k) => k.kind === kind)!.schema;
const vap = schemaOf('ValidatingAdmissionPolicy');
const mwc = schemaOf('MutatingWebhookConfiguration');
const map = schemaOf('MutatingAdmissionPolicy');
const ns = schemaOf('Namespace');

const conds = (...names: string[]) => names.map((n) => ({ name: n, expression: `e-${n}` }));
const policy = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'p' }) => ({
  apiVersion: 'admissionregistration.orch.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata,
  spec,
});
const smp = (schema: Schema, original: unknown, patch: unknown) => applyStrategicMergePatch(original, patch, schema) as any;
const errorCode = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof PatchError ? err.code : 'other';
  }
  return 'none';
};

describe('strategic merge: lists merged by key (each merge-keyed list of our kinds)', () => {
  it('ValidatingAdmissionPolicy spec.matchConditions merge by name: changed item merged, others kept', () => {
    const out = smp(vap, policy({ matchConditions: conds('a', 'b') }), { spec: { matchConditions: [{ name: 'b', expression: 'new' }] } });
    expect(out.spec.matchConditions).toEqual([
      { name: 'a', expression: 'e-a' },
      { name: 'b', expression: 'new' },
    ]);
  });

  it('ValidatingAdmissionPolicy spec.variables merge by name', () => {
    const out = smp(vap, policy({ variables: conds('x') }), { spec: { variables: [{ name: 'y', expression: 'e-y' }] } });
    expect(out.spec.variables.map((v: any) => v.name).sort()).toEqual(['x', 'y']);
  });

  it('MutatingAdmissionPolicy spec.matchConditions merge by name', () => {
    const out = smp(map, { spec: { matchConditions: conds('a') } }, { spec: { matchConditions: conds('c') } });
    expect(out.spec.matchConditions.map((v: any) => v.name).sort()).toEqual(['a', 'c']);
  });

  it('MutatingWebhookConfiguration webhooks merge by name', () => {
    const original = {
      webhooks: [
        { name: 'a.orch.io', sideEffects: 'None' },
        { name: 'b.orch.io', sideEffects: 'None' },
      ],
    };
    const out = smp(mwc, original, { webhooks: [{ name: 'a.orch.io', timeoutSeconds: 5 }] });
    expect(out.webhooks).toEqual([
      { name: 'a.orch.io', sideEffects: 'None', timeoutSeconds: 5 },
      { name: 'b.orch.io', sideEffects: 'None' },
    ]);
  });

  it('Namespace status.conditions merge by type', () => {
    const original = {
      status: {
        conditions: [
          { type: 'A', status: 'True' },
          { type: 'B', status: 'False' },
        ],
      },
    };
    const out = smp(ns, original, { status: { conditions: [{ type: 'B', status: 'True' }] } });
    expect(out.status.conditions).toEqual([
      { type: 'A', status: 'True' },
      { type: 'B', status: 'True' },
    ]);
  });

  it('metadata.ownerReferences merge by uid', () => {
    const ref = (uid: string) => ({ apiVersion: 'v1', kind: 'Namespace', name: uid, uid });
    const out = smp(vap, policy({}, { name: 'p', ownerReferences: [ref('1')] }), { metadata: { ownerReferences: [ref('2')] } });
    expect(out.metadata.ownerReferences.map((r: any) => r.uid).sort()).toEqual(['1', '2']);
  });

  it('metadata.finalizers (merge strategy, scalars) are a union without duplicates', () => {
    const out = smp(vap, policy({}, { name: 'p', finalizers: ['a', 'b'] }), { metadata: { finalizers: ['b', 'c'] } });
    expect([...out.metadata.finalizers].sort()).toEqual(['a', 'b', 'c']);
  });

  it('a new item without $setElementOrder comes first, as Kubernetes orders it', () => {
    const out = smp(vap, policy({ matchConditions: conds('a', 'b') }), { spec: { matchConditions: conds('c') } });
    expect(out.spec.matchConditions.map((c: any) => c.name)).toEqual(['c', 'a', 'b']);
  });
});

describe('strategic merge: fields without a merge strategy', () => {
  it('an atomic list (validations) is replaced whole', () => {
    const out = smp(vap, policy({ validations: [{ expression: 'a' }, { expression: 'b' }] }), { spec: { validations: [{ expression: 'c' }] } });
    expect(out.spec.validations).toEqual([{ expression: 'c' }]);
  });

  it('maps merge and null deletes a field', () => {
    const out = smp(vap, policy({ failurePolicy: 'Fail', validations: [{ expression: 'a' }] }, { name: 'p', labels: { a: '1', b: '2' } }), {
      metadata: { labels: { a: null, c: '3' } },
      spec: { failurePolicy: null },
    });
    expect(out.metadata.labels).toEqual({ b: '2', c: '3' });
    expect(out.spec).toEqual({ validations: [{ expression: 'a' }] });
  });

  it('a patch that is not an object is a BadPatch', () => {
    expect(errorCode(() => smp(vap, policy({}), [1]))).toBe('BadPatch');
  });
});

describe('strategic merge: directives', () => {
  it('$patch: delete in a keyed list removes that item', () => {
    const out = smp(vap, policy({ matchConditions: conds('a', 'b', 'c') }), { spec: { matchConditions: [{ name: 'b', $patch: 'delete' }] } });
    expect(out.spec.matchConditions.map((c: any) => c.name)).toEqual(['a', 'c']);
  });

  it('$patch: delete without the merge key is a BadPatch', () => {
    expect(errorCode(() => smp(vap, policy({ matchConditions: conds('a') }), { spec: { matchConditions: [{ $patch: 'delete' }] } }))).toBe('BadPatch');
  });

  it('$patch: replace as a list item replaces the list with the other items', () => {
    const out = smp(vap, policy({ matchConditions: conds('a', 'b') }), { spec: { matchConditions: [{ $patch: 'replace' }, { name: 'z', expression: 'z' }] } });
    expect(out.spec.matchConditions).toEqual([{ name: 'z', expression: 'z' }]);
  });

  it('$patch: replace in a map replaces the map', () => {
    const out = smp(vap, policy({}, { name: 'p', labels: { a: '1', b: '2' } }), { metadata: { labels: { $patch: 'replace', c: '3' } } });
    expect(out.metadata.labels).toEqual({ c: '3' });
  });

  it('$patch: delete in a map empties it', () => {
    const out = smp(vap, policy({}, { name: 'p', labels: { a: '1' } }), { metadata: { labels: { $patch: 'delete' } } });
    expect(out.metadata.labels).toEqual({});
  });

  it('$patch: merge in a map is the default merge', () => {
    const out = smp(vap, policy({}, { name: 'p', labels: { a: '1' } }), { metadata: { labels: { $patch: 'merge', b: '2' } } });
    expect(out.metadata.labels).toEqual({ a: '1', b: '2' });
  });

  it('$patch: merge as a list item is refused, as Kubernetes refuses it', () => {
    expect(errorCode(() => smp(vap, policy({ matchConditions: conds('a') }), { spec: { matchConditions: [{ $patch: 'merge' }] } }))).toBe('BadPatch');
  });

  it('an unknown $patch value is a BadPatch', () => {
    expect(errorCode(() => smp(vap, policy({}), { metadata: { labels: { $patch: 'explode' } } }))).toBe('BadPatch');
  });

  it('$deleteFromPrimitiveList removes values from a merged scalar list', () => {
    const out = smp(vap, policy({}, { name: 'p', finalizers: ['a', 'b', 'c'] }), { metadata: { '$deleteFromPrimitiveList/finalizers': ['b'] } });
    expect(out.metadata.finalizers).toEqual(['a', 'c']);
  });

  it('$deleteFromPrimitiveList that is not a list is a BadPatch', () => {
    expect(errorCode(() => smp(vap, policy({}, { name: 'p', finalizers: ['a'] }), { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } }))).toBe('BadPatch');
  });

  it('$setElementOrder orders the merged list (new item placed where the order says)', () => {
    const out = smp(vap, policy({ matchConditions: conds('a', 'b') }), {
      spec: { '$setElementOrder/matchConditions': [{ name: 'a' }, { name: 'c' }, { name: 'b' }], matchConditions: [{ name: 'c', expression: 'e-c' }] },
    });
    expect(out.spec.matchConditions.map((c: any) => c.name)).toEqual(['a', 'c', 'b']);
  });

  it('$setElementOrder alone reorders the existing list', () => {
    const out = smp(vap, policy({ matchConditions: conds('a', 'b') }), { spec: { '$setElementOrder/matchConditions': [{ name: 'b' }, { name: 'a' }] } });
    expect(out.spec.matchConditions.map((c: any) => c.name)).toEqual(['b', 'a']);
  });

  it('$setElementOrder orders scalar lists too', () => {
    const out = smp(vap, policy({}, { name: 'p', finalizers: ['a', 'b'] }), { metadata: { '$setElementOrder/finalizers': ['b', 'c', 'a'], finalizers: ['c'] } });
    expect(out.metadata.finalizers).toEqual(['b', 'c', 'a']);
  });

  it('$retainKeys keeps only the listed members of the map', () => {
    const out = smp(vap, policy({ failurePolicy: 'Fail', paramKind: { kind: 'K', apiVersion: 'v1' }, validations: [] }), {
      spec: { $retainKeys: ['failurePolicy', 'validations'], failurePolicy: 'Ignore' },
    });
    expect(out.spec).toEqual({ failurePolicy: 'Ignore', validations: [] });
  });

  it('$retainKeys that does not list a patched member is Unprocessable', () => {
    expect(errorCode(() => smp(vap, policy({ failurePolicy: 'Fail' }), { spec: { $retainKeys: ['validations'], failurePolicy: 'Ignore' } }))).toBe('Unprocessable');
  });

  it('directives never leak into the result, even in items new to the list', () => {
    const out = smp(vap, policy({}), {
      spec: { paramKind: { $patch: 'replace', kind: 'K' }, '$setElementOrder/matchConditions': [{ name: 'n' }], matchConditions: [{ name: 'n', expression: 'e' }] },
    });
    expect(out.spec).toEqual({ paramKind: { kind: 'K' }, matchConditions: [{ name: 'n', expression: 'e' }] });
  });
});
