/**
 * A create's managedFields come from a walk of their own (src/patch/created-fields.ts). They must be
 * byte for byte what the general path gives (compare into a field set, the ownable fields, FieldsV1):
 * a create given one other manager with an empty set goes through the general path, so every object
 * here, and several hundred random variants of each, is recorded both ways and the JSON compared.
 */
import { describe, expect, it } from 'vitest';
import { recordUpdate, type WriteScope } from '../../src/patch/managed-fields.js';
import { kinds } from '../../src/resources/kinds.js';
import type { KubeObject } from '../../src/api/types.js';
import { mulberry32 as random } from '../helpers/rng.js';

const kind = (name: string) => kinds.find((k) => k.kind === name)!;
const scopeOf = (name: string, subresource?: 'status'): WriteScope => {
  const k = kind(name);
  return { schema: k.schema, apiVersion: `${k.group}/v1`, hasStatus: k.hasStatus, now: '2026-01-01T00:00:00Z', ...(subresource ? { subresource } : {}) };
};

/** The general path: another manager already listed (with nothing) makes the create an ordinary update. */
function general(obj: KubeObject, scope: WriteScope): unknown {
  const other = { manager: 'other', operation: 'Update', apiVersion: scope.apiVersion, fieldsType: 'FieldsV1', fieldsV1: {} };
  const o = structuredClone(obj);
  o.metadata = { ...o.metadata, managedFields: [other] };
  return recordUpdate(undefined, o, 'tester', scope);
}

const created = (obj: KubeObject, scope: WriteScope): unknown => recordUpdate(undefined, structuredClone(obj), 'tester', scope);

const event: KubeObject = {
  apiVersion: 'events.orch.io/v1',
  kind: 'Event',
  metadata: { name: 'e', namespace: 'default', labels: { app: 'a', 'orch.io/x': 'y' }, annotations: { note: 'n' }, finalizers: ['b', 'a', 'b'], uid: 'u', resourceVersion: '1' },
  eventTime: '2026-01-01T00:00:00.000000Z',
  type: 'Normal',
  reason: 'Scheduled',
  regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'p', uid: 'u' },
  series: { count: 2, lastObservedTime: '2026-01-01T00:00:00.000000Z' },
  note: 'hello',
};

const policy: KubeObject = {
  apiVersion: 'admissionregistration.orch.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'p', ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u1' }] },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] },
    matchConditions: [
      { name: 'b', expression: 'true' },
      { name: 'a', expression: 'false' },
      { name: 'b', expression: 'last wins' },
    ],
    validations: [{ expression: 'object.x > 1', message: 'm' }],
    variables: [{ name: 'v', expression: '1' }],
    auditAnnotations: [{ key: 'k', valueExpression: '"v"' }],
  },
  status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'R', message: 'm' }] },
};

const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels: {} }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };

const role: KubeObject = {
  apiVersion: 'rbac.authorization.orch.io/v1',
  kind: 'Role',
  metadata: { name: 'r', namespace: 'default' },
  rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
};

const bases: [string, KubeObject][] = [
  ['Event', event],
  ['ValidatingAdmissionPolicy', policy],
  ['Namespace', namespace],
  ['Role', role],
];

const REPLACEMENTS: unknown[] = [null, {}, [], 'text', 3, true, { extra: { deep: [1, 2] } }, [{ name: 'x' }, { name: 'x', more: 1 }], [{ nokey: 1 }], ['s', 's']];

/** obj with one value somewhere in it replaced, or one key added or removed. */
function mutate(obj: unknown, rnd: () => number): unknown {
  const copy = structuredClone(obj) as Record<string, unknown>;
  let node: unknown = copy;
  for (let depth = 0; depth < 6; depth++) {
    const keys = node !== null && typeof node === 'object' ? Object.keys(node) : [];
    if (keys.length === 0) break;
    const k = keys[Math.floor(rnd() * keys.length)];
    const child = (node as Record<string, unknown>)[k];
    const r = rnd();
    if (r < 0.3 || child === null || typeof child !== 'object') {
      if (r < 0.1 && !Array.isArray(node)) delete (node as Record<string, unknown>)[k];
      else if (r < 0.2 && !Array.isArray(node)) (node as Record<string, unknown>)[`k${Math.floor(rnd() * 4)}`] = structuredClone(REPLACEMENTS[Math.floor(rnd() * REPLACEMENTS.length)]);
      else (node as Record<string, unknown>)[k] = structuredClone(REPLACEMENTS[Math.floor(rnd() * REPLACEMENTS.length)]);
      break;
    }
    node = child;
  }
  return copy;
}

describe("a create's managedFields, built in one walk", () => {
  for (const [name, base] of bases) {
    it(`${name}: the same JSON as the general path, for the object and 400 variants`, () => {
      const scopes = [scopeOf(name), scopeOf(name, 'status')];
      const first = created(base, scopes[0]);
      expect(Array.isArray(first) && first.length).toBe(1);
      const rnd = random(name.length * 7919);
      let obj = base;
      for (let i = 0; i <= 400; i++) {
        for (const scope of scopes) expect(JSON.stringify(created(obj, scope)), `variant ${i}: ${JSON.stringify(obj)}`).toBe(JSON.stringify(general(obj, scope)));
        // Every 20th variant starts again from the object, so variants stay close to real ones.
        obj = mutate(i % 20 === 19 ? base : obj, rnd) as KubeObject;
        if (obj.metadata === null || typeof obj.metadata !== 'object') obj.metadata = { name: 'm' };
      }
    });
  }

  it('an Event: members marked, system metadata and apiVersion/kind left out, keys in order', () => {
    const [entry] = created(event, scopeOf('Event')) as Record<string, unknown>[];
    expect(JSON.stringify(entry.fieldsV1)).toBe(
      JSON.stringify({
        'f:eventTime': {},
        'f:metadata': { 'f:annotations': { '.': {}, 'f:note': {} }, 'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} }, 'f:labels': { '.': {}, 'f:app': {}, 'f:orch.io/x': {} } },
        'f:note': {},
        'f:reason': {},
        'f:regarding': {},
        'f:series': { 'f:count': {}, 'f:lastObservedTime': {} },
        'f:type': {},
      }),
    );
    expect(entry).toMatchObject({ manager: 'tester', operation: 'Update', apiVersion: 'events.orch.io/v1', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1' });
  });

  it('a keyed-list item without its key: no managedFields, as the general path', () => {
    const bad = structuredClone(policy);
    (bad.spec as { matchConditions: unknown[] }).matchConditions.push({ expression: 'no name' });
    expect(created(bad, scopeOf('ValidatingAdmissionPolicy'))).toBeUndefined();
    expect(general(bad, scopeOf('ValidatingAdmissionPolicy'))).toBeUndefined();
  });

  it('an object that sets nothing ownable: no entry', () => {
    expect(created({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, spec: {} }, scopeOf('Namespace'))).toEqual([]);
  });
});
