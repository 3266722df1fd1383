/**
 * ValidatingAdmissionPolicies on a real orchd: a policy takes effect through its binding; denials,
 * warnings, failurePolicy, matchConditions, selectors, params, new generations, deleted bindings and
 * DELETE requests, all observed through HTTP answers and what the store then holds.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';
import { created as createdAt, namespaceMaker } from './support.js';
import { sleep } from '../helpers/poll.js';

const ADM = '/apis/admissionregistration.orch.io/v1';
const VAP = `${ADM}/validatingadmissionpolicies`;
const VAPB = `${ADM}/validatingadmissionpolicybindings`;
const NS = '/api/v1/namespaces';
const events = (ns: string) => `/apis/events.orch.io/v1/namespaces/${ns}/events`;

let srv: TestServer;
let n = 0;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv?.stop();
});

const eventRule = { apiGroups: ['events.orch.io'], apiVersions: ['*'], resources: ['events'], operations: ['CREATE', 'UPDATE'] };
const nsRule = { apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['*'] };

function policy(name: string, spec: Record<string, unknown>): any {
  return { apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec: { matchConstraints: { resourceRules: [eventRule] }, ...spec } };
}
function binding(name: string, policyName: string, spec: Record<string, unknown> = {}): any {
  return { apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } };
}
const created = (path: string, body: unknown): Promise<any> => createdAt(srv.url, path, body);
const namespace = namespaceMaker(() => srv.url, 'adm');
function event(name: string, over: Record<string, unknown> = {}): any {
  const e = fixtures.event();
  e.metadata = { name };
  return { ...e, ...over };
}
/** Installs a policy and binding, runs fn, and removes both (so later tests start clean). */
async function withPolicy(p: any, b: any, fn: () => Promise<void>): Promise<void> {
  await created(VAP, p);
  await created(VAPB, b);
  try {
    await fn();
  } finally {
    await call(srv.url, 'DELETE', `${VAPB}/${b.metadata.name}`);
    await call(srv.url, 'DELETE', `${VAP}/${p.metadata.name}`);
  }
}

describe('deny', () => {
  test('a false validation refuses the write with the policy message, reason Invalid → 422', async () => {
    const ns = await namespace();
    const p = policy('no-forbidden-reason', { validations: [{ expression: "object.reason != 'Forbidden'", message: 'reason must not be Forbidden' }] });
    await withPolicy(p, binding('no-forbidden-reason-b', 'no-forbidden-reason'), async () => {
      await created(events(ns), event('ok', { reason: 'Scheduled' }));
      const r = await call(srv.url, 'POST', events(ns), event('bad', { reason: 'Forbidden' }));
      expect(r.status).toBe(422);
      const msg = "events.events.orch.io \"bad\" is forbidden: ValidatingAdmissionPolicy 'no-forbidden-reason' with binding 'no-forbidden-reason-b' denied request: reason must not be Forbidden";
      expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422, message: msg, details: { name: 'bad', group: 'events.orch.io', kind: 'events' } });
      expect(r.body.details.causes).toEqual([{ message: msg.slice(msg.indexOf('ValidatingAdmissionPolicy')) }]);
      expect((await call(srv.url, 'GET', `${events(ns)}/bad`)).status).toBe(404);
      // updates are requests too
      const cur = (await call(srv.url, 'GET', `${events(ns)}/ok`)).body;
      const u = await call(srv.url, 'PUT', `${events(ns)}/ok`, { ...cur, reason: 'Forbidden' });
      expect(u.status).toBe(422);
    });
    // without the binding the same write passes
    await created(events(ns), event('bad', { reason: 'Forbidden' }));
  });

  test('reason Forbidden → 403; no message → "failed expression"; messageExpression wins', async () => {
    const ns = await namespace();
    const p = policy('reasons', {
      validations: [
        { expression: "object.note != 'a'", reason: 'Forbidden' },
        { expression: "object.note != 'b'", messageExpression: "'note ' + object.note + ' is refused'", message: 'static' },
        { expression: "object.note != 'c'", messageExpression: "''", message: 'static when the expression gives nothing' },
      ],
    });
    await withPolicy(p, binding('reasons-b', 'reasons'), async () => {
      const a = await call(srv.url, 'POST', events(ns), event('a', { note: 'a' }));
      expect(a.status).toBe(403);
      expect(a.body.reason).toBe('Forbidden');
      expect(a.body.message).toMatch(/denied request: failed expression: object.note != 'a'$/);
      const b = await call(srv.url, 'POST', events(ns), event('b', { note: 'b' }));
      expect(b.body.message).toMatch(/denied request: note b is refused$/);
      const c = await call(srv.url, 'POST', events(ns), event('c', { note: 'c' }));
      expect(c.body.message).toMatch(/denied request: static when the expression gives nothing$/);
    });
  });

  test('a dry run is refused as the write would be', async () => {
    const ns = await namespace();
    await withPolicy(policy('dry', { validations: [{ expression: 'false', message: 'never' }] }), binding('dry-b', 'dry'), async () => {
      const r = await call(srv.url, 'POST', `${events(ns)}?dryRun=All`, event('x'));
      expect(r.status).toBe(422);
    });
  });
});

describe('validationActions', () => {
  test('Warn admits the write with a Warning header', async () => {
    const ns = await namespace();
    await withPolicy(
      policy('warner', { validations: [{ expression: "object.type == 'Warning'", message: 'only warnings please' }] }),
      binding('warner-b', 'warner', { validationActions: ['Warn'] }),
      async () => {
        const r = await call(srv.url, 'POST', events(ns), event('w1'));
        expect(r.status).toBe(201);
        expect(r.headers.get('warning')).toBe(`299 - "Validation failed for ValidatingAdmissionPolicy 'warner' with binding 'warner-b': only warnings please"`);
        const ok = await call(srv.url, 'POST', events(ns), event('w2', { type: 'Warning' }));
        expect(ok.status).toBe(201);
        expect(ok.headers.get('warning')).toBeNull();
      },
    );
  });
  test('Audit alone neither refuses nor warns', async () => {
    const ns = await namespace();
    await withPolicy(policy('auditor', { validations: [{ expression: 'false' }] }), binding('auditor-b', 'auditor', { validationActions: ['Audit'] }), async () => {
      const r = await call(srv.url, 'POST', events(ns), event('a1'));
      expect(r.status).toBe(201);
      expect(r.headers.get('warning')).toBeNull();
    });
  });
});

describe('failurePolicy', () => {
  // object.series is absent on these events: reading a field of it is a runtime error.
  const erroring = (name: string, failurePolicy: string) =>
    policy(name, { failurePolicy, validations: [{ expression: 'object.series.count > 0' }, { expression: "object.note != 'bad'", message: 'bad note' }] });
  test('Fail refuses on a runtime error, with the error', async () => {
    const ns = await namespace();
    await withPolicy(erroring('err-fail', 'Fail'), binding('err-fail-b', 'err-fail'), async () => {
      const r = await call(srv.url, 'POST', events(ns), event('e1'));
      expect(r.status).toBe(422);
      expect(r.body.message).toContain("denied request: expression 'object.series.count > 0' resulted in error: ");
    });
  });
  test('Ignore admits on a runtime error', async () => {
    const ns = await namespace();
    await withPolicy(erroring('err-ignore', 'Ignore'), binding('err-ignore-b', 'err-ignore'), async () => {
      expect((await call(srv.url, 'POST', events(ns), event('e2'))).status).toBe(201);
      // only the error is ignored: a false validation still refuses
      const r = await call(srv.url, 'POST', events(ns), event('e3', { note: 'bad' }));
      expect(r.status).toBe(422);
      expect(r.body.message).toMatch(/denied request: bad note$/);
    });
  });
});

describe('matchConditions', () => {
  const p = (name: string, conditions: string[], failurePolicy = 'Fail') =>
    policy(name, { failurePolicy, matchConditions: conditions.map((expression, i) => ({ name: `c${i}`, expression })), validations: [{ expression: 'false', message: 'refused' }] });
  test('any false skips the policy, even when another errors', async () => {
    const ns = await namespace();
    await withPolicy(p('mc-skip', ["object.type == 'Warning'", 'object.series.count > 0']), binding('mc-skip-b', 'mc-skip'), async () => {
      expect((await call(srv.url, 'POST', events(ns), event('n1'))).status).toBe(201);
      const w = await call(srv.url, 'POST', events(ns), event('n2', { type: 'Warning', series: { count: 2, lastObservedTime: '2026-01-02T03:04:05.123456Z' } }));
      expect(w.status).toBe(422);
      expect(w.body.message).toMatch(/denied request: refused$/);
    });
  });
  test('an error with none false follows failurePolicy', async () => {
    const ns = await namespace();
    await withPolicy(p('mc-err', ['true', 'object.series.count > 0']), binding('mc-err-b', 'mc-err'), async () => {
      const r = await call(srv.url, 'POST', events(ns), event('n3'));
      expect(r.status).toBe(422);
      expect(r.body.message).toContain("denied request: expression 'object.series.count > 0' resulted in error: ");
    });
    await withPolicy(p('mc-err-i', ['true', 'object.series.count > 0'], 'Ignore'), binding('mc-err-i-b', 'mc-err-i'), async () => {
      expect((await call(srv.url, 'POST', events(ns), event('n4'))).status).toBe(201);
    });
  });
});

describe('selectors and rules', () => {
  test('namespaces must carry label team (the Namespace itself is matched by namespaceSelector)', async () => {
    const p = policy('team', {
      matchConstraints: { resourceRules: [nsRule], namespaceSelector: { matchExpressions: [{ key: 'managed', operator: 'In', values: ['yes'] }] } },
      validations: [{ expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", message: 'namespaces must carry label team' }],
    });
    await withPolicy(p, binding('team-b', 'team'), async () => {
      const r = await call(srv.url, 'POST', NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `team-${++n}`, labels: { managed: 'yes' } } });
      expect(r.status).toBe(422);
      expect(r.body.message).toBe(`namespaces "${r.body.details.name}" is forbidden: ValidatingAdmissionPolicy 'team' with binding 'team-b' denied request: namespaces must carry label team`);
      expect((await call(srv.url, 'POST', NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `team-${++n}`, labels: { managed: 'yes', team: 'a' } } })).status).toBe(201);
      expect((await call(srv.url, 'POST', NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `team-${++n}` } })).status).toBe(201);
    });
  });
  test("namespaceSelector on the event's namespace, objectSelector on the event", async () => {
    const prod = await namespace({ env: 'prod' });
    const dev = await namespace({ env: 'dev' });
    const p = policy('sel', {
      matchConstraints: { resourceRules: [eventRule], namespaceSelector: { matchLabels: { env: 'prod' } }, objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] } },
      validations: [{ expression: 'false', message: 'no events in prod' }],
    });
    await withPolicy(p, binding('sel-b', 'sel'), async () => {
      expect((await call(srv.url, 'POST', events(prod), event('s1'))).status).toBe(422);
      expect((await call(srv.url, 'POST', events(dev), event('s2'))).status).toBe(201);
      const labelled = event('s3');
      labelled.metadata.labels = { skip: 'yes' };
      expect((await call(srv.url, 'POST', events(prod), labelled)).status).toBe(201);
    });
  });
  test('excludeResourceRules win; the binding matchResources narrows', async () => {
    const ns = await namespace({ tier: 'x' });
    const p = policy('narrow', {
      matchConstraints: { resourceRules: [eventRule], excludeResourceRules: [{ ...eventRule, resourceNames: ['excluded'] }] },
      validations: [{ expression: 'false', message: 'no' }],
    });
    await withPolicy(p, binding('narrow-b', 'narrow', { matchResources: { namespaceSelector: { matchLabels: { tier: 'x' } } } }), async () => {
      expect((await call(srv.url, 'POST', events(ns), event('excluded'))).status).toBe(201);
      expect((await call(srv.url, 'POST', events(ns), event('included'))).status).toBe(422);
      expect((await call(srv.url, 'POST', events('default'), event(`other-${++n}`))).status).toBe(201);
    });
  });
  test('a PATCH is an UPDATE; a status write is matched only by the status subresource', async () => {
    const p = policy('ns-frozen', {
      matchConstraints: { resourceRules: [{ ...nsRule, operations: ['UPDATE'], resources: ['namespaces'] }], objectSelector: { matchLabels: { frozen: 'yes' } } },
      validations: [{ expression: 'false', message: 'frozen' }],
    });
    const ns = await namespace({ frozen: 'yes' });
    await withPolicy(p, binding('ns-frozen-b', 'ns-frozen'), async () => {
      const r = await call(srv.url, 'PATCH', `${NS}/${ns}`, { metadata: { annotations: { a: 'b' } } }, { 'Content-Type': 'application/merge-patch+json' });
      expect(r.status).toBe(422);
      expect(r.body.message).toMatch(/denied request: frozen$/);
      const cur = (await call(srv.url, 'GET', `${NS}/${ns}`)).body;
      expect((await call(srv.url, 'PUT', `${NS}/${ns}/status`, cur)).status).toBe(200);
    });
    const q = policy('ns-status', {
      matchConstraints: { resourceRules: [{ ...nsRule, operations: ['UPDATE'], resources: ['namespaces/status'] }] },
      validations: [{ expression: 'false', message: 'no status writes' }],
    });
    await withPolicy(q, binding('ns-status-b', 'ns-status'), async () => {
      const cur = (await call(srv.url, 'GET', `${NS}/${ns}`)).body;
      const r = await call(srv.url, 'PUT', `${NS}/${ns}/status`, cur);
      expect(r.status).toBe(422);
      expect(r.body.message).toMatch(/denied request: no status writes$/);
      expect((await call(srv.url, 'PATCH', `${NS}/${ns}`, { metadata: { annotations: { a: 'c' } } }, { 'Content-Type': 'application/merge-patch+json' })).status).toBe(200);
    });
  });
  test('policies never apply to the policy kinds themselves', async () => {
    const p = policy('self', {
      matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['*'] }] },
      validations: [{ expression: 'false', message: 'nothing' }],
    });
    await withPolicy(p, binding('self-b', 'self'), async () => {
      expect((await call(srv.url, 'POST', VAP, policy(`other-${++n}`, { validations: [{ expression: 'true' }] }))).status).toBe(201);
      expect((await call(srv.url, 'POST', events('default'), event(`any-${++n}`))).status).toBe(422);
    });
  });
});

describe('lifecycle', () => {
  test('a new generation takes effect; a deleted binding stops the policy', async () => {
    const ns = await namespace();
    await created(VAP, policy('gen', { validations: [{ expression: "object.note != 'x'", message: 'v1' }] }));
    await created(VAPB, binding('gen-b', 'gen'));
    expect((await call(srv.url, 'POST', events(ns), event('g1', { note: 'x' }))).body.message).toMatch(/v1$/);
    const cur = (await call(srv.url, 'GET', `${VAP}/gen`)).body;
    cur.spec.validations = [{ expression: "object.note != 'y'", message: 'v2' }];
    expect((await call(srv.url, 'PUT', `${VAP}/gen`, cur)).status).toBe(200);
    expect((await call(srv.url, 'POST', events(ns), event('g1', { note: 'x' }))).status).toBe(201);
    expect((await call(srv.url, 'POST', events(ns), event('g2', { note: 'y' }))).body.message).toMatch(/v2$/);
    expect((await call(srv.url, 'DELETE', `${VAPB}/gen-b`)).status).toBe(200);
    expect((await call(srv.url, 'POST', events(ns), event('g2', { note: 'y' }))).status).toBe(201);
    await call(srv.url, 'DELETE', `${VAP}/gen`);
  });
  test('a binding to a missing policy does nothing until the policy appears', async () => {
    const ns = await namespace();
    await created(VAPB, binding('late-b', 'late'));
    expect((await call(srv.url, 'POST', events(ns), event('l1'))).status).toBe(201);
    await created(VAP, policy('late', { validations: [{ expression: 'false', message: 'late' }] }));
    expect((await call(srv.url, 'POST', events(ns), event('l2'))).status).toBe(422);
    await call(srv.url, 'DELETE', `${VAPB}/late-b`);
    await call(srv.url, 'DELETE', `${VAP}/late`);
  });
  test('DELETE is matched with oldObject (object is null)', async () => {
    const ns = await namespace();
    await created(events(ns), event('keep', { note: 'protected' }));
    await created(events(ns), event('drop', { note: 'free' }));
    const p = policy('protect', {
      matchConstraints: { resourceRules: [{ ...eventRule, operations: ['DELETE'] }] },
      validations: [{ expression: "object == null && oldObject.note != 'protected'", messageExpression: "'event ' + oldObject.metadata.name + ' is protected'" }],
    });
    await withPolicy(p, binding('protect-b', 'protect'), async () => {
      const r = await call(srv.url, 'DELETE', `${events(ns)}/keep`);
      expect(r.status).toBe(422);
      expect(r.body.message).toMatch(/denied request: event keep is protected$/);
      expect((await call(srv.url, 'DELETE', `${events(ns)}/drop`)).status).toBe(200);
    });
    expect((await call(srv.url, 'DELETE', `${events(ns)}/keep`)).status).toBe(200);
  });

  test('controllers write as the system user, not as the user whose write woke them', async () => {
    const ns = await namespace();
    await created(events(ns), event('left-behind'));
    // Only orchd itself may delete Events: the namespace's cleanup must still empty it.
    const p = policy('system-deletes', {
      matchConstraints: { resourceRules: [{ ...eventRule, operations: ['DELETE'] }] },
      validations: [{ expression: "request.userInfo.username == 'system:apiserver'", message: 'only the system deletes events' }],
    });
    await withPolicy(p, binding('system-deletes-b', 'system-deletes'), async () => {
      expect((await call(srv.url, 'DELETE', `${events(ns)}/left-behind`)).status).toBe(422);
      expect((await call(srv.url, 'DELETE', `${NS}/${ns}`)).status).toBe(200);
      let gone = false;
      for (let i = 0; i < 100 && !gone; i++) {
        gone = (await call(srv.url, 'GET', `${NS}/${ns}`)).status === 404;
        if (!gone) await sleep(50);
      }
      expect(gone).toBe(true);
    });
  });
});

describe('params', () => {
  const paramPolicy = (name: string) =>
    policy(name, {
      paramKind: { apiVersion: 'v1', kind: 'Namespace' },
      validations: [{ expression: 'object.note in params.metadata.labels', messageExpression: "'note must be one of ' + params.metadata.name + ' labels'" }],
    });
  test('paramRef by name: the param object is read per request', async () => {
    const ns = await namespace();
    const paramNs = await namespace({ allowed: 'x' });
    await withPolicy(paramPolicy('param'), binding('param-b', 'param', { paramRef: { name: paramNs, parameterNotFoundAction: 'Deny' } }), async () => {
      expect((await call(srv.url, 'POST', events(ns), event('p1', { note: 'allowed' }))).status).toBe(201);
      const r = await call(srv.url, 'POST', events(ns), event('p2', { note: 'other' }));
      expect(r.body.message).toMatch(new RegExp(`denied request: note must be one of ${paramNs} labels$`));
    });
  });
  test('a missing param follows parameterNotFoundAction', async () => {
    const ns = await namespace();
    await withPolicy(paramPolicy('param-deny'), binding('param-deny-b', 'param-deny', { paramRef: { name: 'absent', parameterNotFoundAction: 'Deny' } }), async () => {
      const r = await call(srv.url, 'POST', events(ns), event('p3'));
      expect(r.status).toBe(422);
      expect(r.body.message).toMatch(/denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/);
    });
    await withPolicy(paramPolicy('param-allow'), binding('param-allow-b', 'param-allow', { paramRef: { name: 'absent', parameterNotFoundAction: 'Allow' } }), async () => {
      expect((await call(srv.url, 'POST', events(ns), event('p4'))).status).toBe(201);
    });
  });
  test('paramRef.namespace with a cluster-scoped paramKind mis-configures the binding', async () => {
    const ns = await namespace();
    await withPolicy(paramPolicy('param-ns'), binding('param-ns-b', 'param-ns', { paramRef: { name: ns, namespace: 'default', parameterNotFoundAction: 'Allow' } }), async () => {
      const r = await call(srv.url, 'POST', events(ns), event('p7'));
      expect(r.status).toBe(422);
      expect(r.body.message).toMatch(/with binding 'param-ns-b' denied request: failed to configure binding: paramRef.namespace must not be provided for a cluster-scoped `paramKind`$/);
    });
  });
  test('paramRef by selector: every matching param is evaluated', async () => {
    const ns = await namespace();
    const lbl = `set${++n}`;
    const a = await namespace({ group: lbl, allowed: 'x' });
    await namespace({ group: lbl, other: 'x' });
    await withPolicy(paramPolicy('param-sel'), binding('param-sel-b', 'param-sel', { paramRef: { selector: { matchLabels: { group: lbl } }, parameterNotFoundAction: 'Deny' } }), async () => {
      // allowed is in one param's labels, not the other's: one failure denies.
      const r = await call(srv.url, 'POST', events(ns), event('p5', { note: 'allowed' }));
      expect(r.status).toBe(422);
      expect(r.body.message).not.toContain(a);
      expect((await call(srv.url, 'POST', events(ns), event('p6', { note: 'group' }))).status).toBe(201);
    });
  });
});

describe('regular expressions (RE2)', () => {
  test('a pattern that backtracks exponentially in JavaScript answers at once (issue 18)', async () => {
    const ns = await namespace();
    const p = policy('words-only', { validations: [{ expression: "object.note.matches('^([a-z]+ ?)+$')", message: 'words only' }] });
    await withPolicy(p, binding('words-only-b', 'words-only'), async () => {
      // 40 letters and a '!': hours on a backtracking engine, microseconds on RE2.
      const r = await call(srv.url, 'POST', events(ns), event('stall', { note: 'a'.repeat(40) + '!' }));
      expect(r.status).toBe(422);
      expect(r.body.message).toContain('words only');
      await created(events(ns), event('fine', { note: 'just some words' }));
    });
  });
  test("a constant lookahead, which RE2 refuses, fails the policy under failurePolicy with cel-go's compile error", async () => {
    const ns = await namespace();
    const p = policy('lookahead', { failurePolicy: 'Fail', validations: [{ expression: "object.note.matches('(?=a)')" }] });
    await withPolicy(p, binding('lookahead-b', 'lookahead'), async () => {
      const r = await call(srv.url, 'POST', events(ns), event('ahead', { note: 'abc' }));
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.body.message).toContain('invalid matches argument');
    });
  });
});
