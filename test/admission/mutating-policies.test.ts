/**
 * MutatingAdmissionPolicies on a real orchd: a policy takes effect through its binding; apply
 * configurations and JSON patches change what is stored; params, matchConditions, failurePolicy,
 * reinvocation, dry runs, the exempt admission kinds and DELETE, all observed through HTTP answers
 * and what the store then holds.
 */
import { describe, expect, test } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';
import { created as createdAt, namespaceMaker } from './support.js';

const ADM = '/apis/admissionregistration.orch.io/v1';
const MAP = `${ADM}/mutatingadmissionpolicies`;
const MAPB = `${ADM}/mutatingadmissionpolicybindings`;
const NS = '/api/v1/namespaces';
const events = (ns: string) => `/apis/events.orch.io/v1/namespaces/${ns}/events`;

const file = serverForFile();
let n = 0;

const eventRule = { apiGroups: ['events.orch.io'], apiVersions: ['*'], resources: ['events'], operations: ['CREATE', 'UPDATE'] };
const nsRule = { apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['CREATE', 'UPDATE'] };
const apply = (expression: string) => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } });
const jsonPatch = (expression: string) => ({ patchType: 'JSONPatch', jsonPatch: { expression } });
const addLabel = (key: string, value: string) => apply(`Object{metadata: Object.metadata{labels: {"${key}": "${value}"}}}`);

function policy(name: string, mutations: unknown[], spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: [eventRule] }, reinvocationPolicy: 'Never', mutations, ...spec },
  };
}
function binding(name: string, policyName: string, spec: Record<string, unknown> = {}): any {
  return { apiVersion: 'admissionregistration.orch.io/v1', kind: 'MutatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, ...spec } };
}
const created = (path: string, body: unknown): Promise<any> => createdAt(file.base, path, body);
const namespace = namespaceMaker(() => file.base, 'mut');
function event(name: string, over: Record<string, unknown> = {}): any {
  const e = fixtures.event();
  e.metadata = { name };
  return { ...e, ...over };
}
/** Installs policies with a binding each (named <policy>-b), runs fn, and removes them all. */
async function withPolicies(policies: any[], fn: () => Promise<void>, bindingSpec: Record<string, unknown> = {}): Promise<void> {
  for (const p of policies) {
    await created(MAP, p);
    await created(MAPB, binding(`${p.metadata.name}-b`, p.metadata.name, bindingSpec));
  }
  try {
    await fn();
  } finally {
    for (const p of policies) {
      await call(file.base, 'DELETE', `${MAPB}/${p.metadata.name}-b`);
      await call(file.base, 'DELETE', `${MAP}/${p.metadata.name}`);
    }
  }
}
const get = async (path: string): Promise<any> => (await call(file.base, 'GET', path)).body;

describe('the authorizer variable', () => {
  test("checks are answered by the server's authorizer chain for the requesting user", async () => {
    const ns = await namespace();
    // No authorization configured: the chain is AlwaysAllow, so the anonymous user may delete events.
    const canDelete = apply(`Object{metadata: Object.metadata{labels: {"can-delete": string(authorizer.group('events.orch.io').resource('events').namespace('${ns}').check('delete').allowed())}}}`);
    await withPolicies([policy('asks-authorizer', [canDelete])], async () => {
      const r = await created(events(ns), event('asked'));
      expect(r.metadata.labels).toEqual({ 'can-delete': 'true' });
    });
  });
});

describe('ApplyConfiguration', () => {
  test('a label is merged into the labels the object has, on create and on update, and stored', async () => {
    const ns = await namespace();
    await withPolicies([policy('labeler', [addLabel('mutated', 'yes')])], async () => {
      const r = await created(events(ns), event('e1', { metadata: { name: 'e1', labels: { own: 'kept' } } }));
      expect(r.metadata.labels).toEqual({ own: 'kept', mutated: 'yes' });
      expect((await get(`${events(ns)}/e1`)).metadata.labels).toEqual({ own: 'kept', mutated: 'yes' });
      // An update that drops the label gets it back.
      const cur = await get(`${events(ns)}/e1`);
      const u = await call(file.base, 'PUT', `${events(ns)}/e1`, { ...cur, metadata: { ...cur.metadata, labels: { own: 'changed' } } });
      expect(u.status, u.text).toBe(200);
      expect(u.body.metadata.labels).toEqual({ own: 'changed', mutated: 'yes' });
      expect((await get(`${events(ns)}/e1`)).metadata.labels).toEqual({ own: 'changed', mutated: 'yes' });
    });
    // Without the binding nothing is added.
    expect((await created(events(ns), event('e2'))).metadata.labels).toBeUndefined();
  });

  test('fields of the object are read by the expression; nested Object types merge member by member', async () => {
    const ns = await namespace();
    const p = policy('from-fields', [apply('Object{metadata: Object.metadata{annotations: {"action": object.action}, labels: {"reason": object.reason}}}')]);
    await withPolicies([p], async () => {
      const r = await created(events(ns), event('e1', { metadata: { name: 'e1', labels: { own: 'kept' }, annotations: { note: 'kept' } } }));
      expect(r.metadata.labels).toEqual({ own: 'kept', reason: 'Scheduled' });
      expect(r.metadata.annotations).toEqual({ note: 'kept', action: 'Binding' });
    });
  });

  test('an Object named for another field path is a type mismatch (failurePolicy Fail refuses, reason Invalid)', async () => {
    const ns = await namespace();
    await withPolicies([policy('mismatch', [apply('Object{regarding: Object.related{name: "x"}}')])], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e1'));
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 403 });
      expect(r.body.message).toBe(
        `policy 'mismatch' with binding 'mismatch-b' denied request: type mismatch: unexpected type name "Object.related", expected "Object.regarding", which matches field name path from root Object type`,
      );
    });
  });

  test('an atomic list or struct may not be set by an apply configuration', async () => {
    const p = policy('atomic-list', [apply('Object{spec: Object.spec{finalizers: ["orch.io/x"]}}')], { matchConstraints: { resourceRules: [nsRule] } });
    await withPolicies([p], async () => {
      const r = await call(file.base, 'POST', NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `mut-direct-${++n}` } });
      expect(r.status).toBe(403);
      expect(r.body.message).toBe(
        "policy 'atomic-list' with binding 'atomic-list-b' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.finalizers",
      );
    });
    const ns = await namespace();
    // An ObjectReference is an atomic struct.
    await withPolicies([policy('atomic-struct', [apply('Object{regarding: Object.regarding{fieldPath: "spec"}}')])], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e1'));
      expect(r.body.message).toBe(
        "policy 'atomic-struct' with binding 'atomic-struct-b' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .regarding",
      );
    });
  });
});

describe('JSONPatch', () => {
  test('add, replace and remove apply in order; escapeKey builds a pointer token', async () => {
    const ns = await namespace();
    const p = policy('patcher', [
      jsonPatch(
        '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("orch.io/patched"), value: "true"}, JSONPatch{op: "replace", path: "/note", value: "note of " + object.metadata.name}, JSONPatch{op: "remove", path: "/metadata/labels/drop"}]',
      ),
    ]);
    await withPolicies([p], async () => {
      const r = await created(events(ns), event('e1', { metadata: { name: 'e1', labels: { drop: 'me', keep: 'me' } } }));
      expect(r.metadata.labels).toEqual({ keep: 'me', 'orch.io/patched': 'true' });
      expect(r.note).toBe('note of e1');
      expect((await get(`${events(ns)}/e1`)).note).toBe('note of e1');
    });
  });

  test('a null value is a value: replace with null clears the field', async () => {
    const ns = await namespace();
    await withPolicies([policy('nuller', [jsonPatch('[JSONPatch{op: "replace", path: "/note", value: null}]')])], async () => {
      const r = await created(events(ns), event('e1'));
      expect(r.note ?? null).toBeNull();
      expect(r.reason).toBe('Scheduled');
    });
  });

  test('a failed test operation leaves the object as it was, without an error', async () => {
    const ns = await namespace();
    const p = policy('tester', [jsonPatch('[JSONPatch{op: "test", path: "/type", value: "Warning"}, JSONPatch{op: "replace", path: "/note", value: "warned"}]')]);
    await withPolicies([p], async () => {
      expect((await created(events(ns), event('normal'))).note).toBe(fixtures.event().note);
      expect((await created(events(ns), event('warning', { type: 'Warning' }))).note).toBe('warned');
    });
  });

  test('a mutation that makes the object invalid is refused by validation: 422 Invalid', async () => {
    const ns = await namespace();
    await withPolicies([policy('breaker', [jsonPatch('[JSONPatch{op: "replace", path: "/type", value: "Bogus"}]')])], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e1'));
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422, details: { name: 'e1', kind: 'Event' } });
      expect(r.body.details.causes).toEqual([expect.objectContaining({ field: 'type', message: expect.stringContaining('Bogus') })]);
      expect((await call(file.base, 'GET', `${events(ns)}/e1`)).status).toBe(404);
    });
  });
});

describe('failurePolicy', () => {
  const failing = (name: string, failurePolicy: string) =>
    policy(name, [apply('Object{metadata: Object.metadata{labels: {"x": object.metadata.labels["missing"]}}}'), addLabel('second', 'ran')], { failurePolicy });

  test('Fail: an evaluation error refuses the request, 403 with reason Invalid and the CEL error', async () => {
    const ns = await namespace();
    await withPolicies([failing('fails', 'Fail')], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e1'));
      expect(r.status).toBe(403);
      const msg = `policy 'fails' with binding 'fails-b' denied request: expression 'Object{metadata: Object.metadata{labels: {"x": object.metadata.labels["missing"]}}}' resulted in error: `;
      expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 403, details: { name: 'e1', group: 'events.orch.io', kind: 'events' } });
      expect(r.body.message.startsWith(msg)).toBe(true);
      expect(r.body.details.causes).toEqual([{ message: r.body.message }]);
      expect((await call(file.base, 'GET', `${events(ns)}/e1`)).status).toBe(404);
    });
  });

  test('Ignore: the failing mutation is skipped, the following ones still apply', async () => {
    const ns = await namespace();
    await withPolicies([failing('ignores', 'Ignore')], async () => {
      const r = await created(events(ns), event('e1'));
      expect(r.metadata.labels).toEqual({ second: 'ran' });
    });
  });

  test('a compile error (typo, wrong result type) is an error failurePolicy governs', async () => {
    const ns = await namespace();
    const typo = policy('typo', [apply('Object{metadata: Object.metadata{lables: {"a": "b"}}}')]);
    await withPolicies([typo], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e1'));
      expect(r.status).toBe(403);
      expect(r.body.message).toMatch(/^policy 'typo' with binding 'typo-b' denied request: compilation error: .*undefined field 'lables'/);
    });
    await withPolicies([policy('wrong-type', [apply('"a string"')])], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e2'));
      expect(r.body.message).toBe("policy 'wrong-type' with binding 'wrong-type-b' denied request: must evaluate to Object but got string");
    });
    await withPolicies([policy('not-patches', [jsonPatch('[{"op": "add"}]')])], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e4'));
      expect(r.body.message).toBe("policy 'not-patches' with binding 'not-patches-b' denied request: must evaluate to list(JSONPatch) but got list(map(string, string))");
    });
    // A dynamic value passes the compiler; its elements are checked when it runs.
    await withPolicies([policy('dyn-patches', [jsonPatch('dyn([1])')])], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e5'));
      expect(r.body.message).toBe(
        "policy 'dyn-patches' with binding 'dyn-patches-b' denied request: type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of int",
      );
    });
    await withPolicies([policy('wrong-type-ignored', [apply('"a string"'), addLabel('still', 'here')], { failurePolicy: 'Ignore' })], async () => {
      expect((await created(events(ns), event('e3'))).metadata.labels).toEqual({ still: 'here' });
    });
  });

  test('a patch that cannot apply: JSONPath error under Fail', async () => {
    const ns = await namespace();
    await withPolicies([policy('bad-path', [jsonPatch('[JSONPatch{op: "remove", path: "/nothing/here"}]')])], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e1'));
      expect(r.status).toBe(403);
      expect(r.body.message).toMatch(/^policy 'bad-path' with binding 'bad-path-b' denied request: JSONPath: /);
    });
  });

  test('a paramKind orchd does not serve mis-configures the policy: 403 Forbidden under Fail, skipped under Ignore', async () => {
    const ns = await namespace();
    const unknown = (name: string, failurePolicy: string) => policy(name, [addLabel('a', 'b')], { failurePolicy, paramKind: { apiVersion: 'example.com/v1', kind: 'Nothing' } });
    await withPolicies([unknown('unknown-param', 'Fail')], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e1'));
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ reason: 'Forbidden', code: 403 });
      expect(r.body.message).toBe(`policy "unknown-param" denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Nothing'`);
    });
    await withPolicies([unknown('unknown-param-ignored', 'Ignore')], async () => {
      expect((await created(events(ns), event('e2'))).metadata.labels).toBeUndefined();
    });
  });

  test('DELETE is never handed to policies: a failing policy does not block it', async () => {
    const ns = await namespace();
    await created(events(ns), event('e1'));
    await withPolicies([failing('fails-on-write', 'Fail')], async () => {
      const cur = await get(`${events(ns)}/e1`);
      expect((await call(file.base, 'PUT', `${events(ns)}/e1`, { ...cur, note: 'x' })).status).toBe(403);
      expect((await call(file.base, 'DELETE', `${events(ns)}/e1`)).status).toBe(200);
    });
  });
});

describe('matchConditions', () => {
  test('a false condition skips the policy; an error under Fail refuses', async () => {
    const ns = await namespace();
    const p = policy('warnings-only', [addLabel('warning', 'seen')], { matchConditions: [{ name: 'is-warning', expression: "object.type == 'Warning'" }] });
    await withPolicies([p], async () => {
      expect((await created(events(ns), event('normal'))).metadata.labels).toBeUndefined();
      expect((await created(events(ns), event('warning', { type: 'Warning' }))).metadata.labels).toEqual({ warning: 'seen' });
    });
    const erring = policy('cond-error', [addLabel('a', 'b')], { matchConditions: [{ name: 'boom', expression: "object.metadata.labels['missing'] == 'x'" }] });
    await withPolicies([erring], async () => {
      const r = await call(file.base, 'POST', events(ns), event('e3'));
      expect(r.status).toBe(403);
      expect(r.body.reason).toBe('Invalid');
      expect(r.body.message).toMatch(/^policy 'cond-error' with binding 'cond-error-b' denied request: expression 'object.metadata.labels\['missing'\] == 'x'' resulted in error: /);
    });
  });

  test('the binding matchResources narrows the policy (namespaceSelector)', async () => {
    const inside = await namespace({ mutate: 'yes' });
    const outside = await namespace();
    await withPolicies(
      [policy('scoped', [addLabel('scoped', 'yes')])],
      async () => {
        expect((await created(events(inside), event('e1'))).metadata.labels).toEqual({ scoped: 'yes' });
        expect((await created(events(outside), event('e1'))).metadata.labels).toBeUndefined();
      },
      { matchResources: { namespaceSelector: { matchLabels: { mutate: 'yes' } } } },
    );
  });
});

describe('params', () => {
  test('by name: the param object of the request namespace; none found under Deny refuses the request', async () => {
    const withParam = await namespace();
    const without = await namespace();
    // The param is an Event itself, created before the policy exists.
    await created(events(withParam), event('settings', { reason: 'TeamA' }));
    const p = policy('from-param', [apply('Object{metadata: Object.metadata{labels: {"team": params.reason}}}')], {
      paramKind: { apiVersion: 'events.orch.io/v1', kind: 'Event' },
    });
    await withPolicies(
      [p],
      async () => {
        expect((await created(events(withParam), event('e1'))).metadata.labels).toEqual({ team: 'TeamA' });
        const r = await call(file.base, 'POST', events(without), event('e1'));
        expect(r.status).toBe(403);
        expect(r.body).toMatchObject({ reason: 'Forbidden', code: 403 });
        expect(r.body.message).toBe(
          "policy 'from-param' with binding 'from-param-b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
        );
      },
      { paramRef: { name: 'settings', parameterNotFoundAction: 'Deny' } },
    );
  });

  test('by selector: each selected param is its own invocation', async () => {
    const a = await namespace({ 'mutation-param': 'yes' });
    const b = await namespace({ 'mutation-param': 'yes' });
    await namespace({ 'mutation-param': 'no' });
    const ns = await namespace();
    const p = policy('per-param', [apply('Object{metadata: Object.metadata{labels: {params.metadata.name: "param"}}}')], { paramKind: { apiVersion: 'v1', kind: 'Namespace' } });
    await withPolicies(
      [p],
      async () => {
        expect((await created(events(ns), event('e1'))).metadata.labels).toEqual({ [a]: 'param', [b]: 'param' });
      },
      { paramRef: { selector: { matchLabels: { 'mutation-param': 'yes' } }, parameterNotFoundAction: 'Allow' } },
    );
  });
});

describe('reinvocation', () => {
  const counter = (name: string, reinvocationPolicy: string) =>
    policy(name, [apply('Object{metadata: Object.metadata{annotations: {"runs": string(int(object.metadata.?annotations.?runs.orValue("0")) + 1)}}}')], { reinvocationPolicy });
  /** Runs when label b is there: reacts to what a later policy adds. */
  const reactor = (name: string, reinvocationPolicy: string) =>
    policy(name, [jsonPatch('has(object.metadata.labels) && "b" in object.metadata.labels ? [JSONPatch{op: "add", path: "/metadata/labels/saw-b", value: "true"}] : []')], { reinvocationPolicy });

  test.each([
    ['IfNeeded, changed after it ran by a later policy → runs again', 'a-reactor', 'IfNeeded', { b: 'x', 'saw-b': 'true' }],
    ['Never → runs once', 'a-reactor', 'Never', { b: 'x' }],
    ['IfNeeded, running after the change → nothing to rerun for', 'z-reactor', 'IfNeeded', { b: 'x', 'saw-b': 'true' }],
  ])('%s', async (_, name, reinvocationPolicy, labels) => {
    const ns = await namespace();
    await withPolicies([reactor(name, reinvocationPolicy), policy('m-add-b', [addLabel('b', 'x')])], async () => {
      expect((await created(events(ns), event('e1'))).metadata.labels).toEqual(labels);
    });
  });

  test.each([
    ['IfNeeded before a changing policy runs twice', 'a-counter', 'IfNeeded', '2'],
    ['Never before a changing policy runs once', 'a-counter', 'Never', '1'],
    ['IfNeeded after every other change runs once', 'z-counter', 'IfNeeded', '1'],
  ])('%s', async (_, name, reinvocationPolicy, runs) => {
    const ns = await namespace();
    await withPolicies([counter(name, reinvocationPolicy), policy('m-add-b', [addLabel('b', 'x')])], async () => {
      const r = await created(events(ns), event('e1'));
      expect(r.metadata.annotations).toEqual({ runs });
      expect(r.metadata.labels).toEqual({ b: 'x' });
    });
  });
});

describe('scope', () => {
  test('a dry run shows the mutation and stores nothing', async () => {
    const ns = await namespace();
    await withPolicies([policy('dry', [addLabel('dry', 'run')])], async () => {
      const r = await call(file.base, 'POST', `${events(ns)}?dryRun=All`, event('e1'));
      expect(r.status, r.text).toBe(201);
      expect(r.body.metadata.labels).toEqual({ dry: 'run' });
      expect((await call(file.base, 'GET', `${events(ns)}/e1`)).status).toBe(404);
    });
  });

  test('other kinds are mutated, the admission configuration kinds never', async () => {
    const everything = { apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['CREATE', 'UPDATE'] };
    await withPolicies([policy('everything', [addLabel('touched', 'yes')], { matchConstraints: { resourceRules: [everything] } })], async () => {
      const nsName = `mut-direct-${++n}`;
      expect((await created(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsName } })).metadata.labels).toMatchObject({ touched: 'yes' });
      const other = await created(MAP, policy('untouched', [addLabel('a', 'b')]));
      expect(other.metadata.labels).toBeUndefined();
      const otherBinding = await created(MAPB, binding('untouched-b', 'nothing'));
      expect(otherBinding.metadata.labels).toBeUndefined();
      await call(file.base, 'DELETE', `${MAPB}/untouched-b`);
      await call(file.base, 'DELETE', `${MAP}/untouched`);
    });
  });
});
