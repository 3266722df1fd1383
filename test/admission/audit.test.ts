/**
 * Audit of validating policies on a real orchd: a binding's Audit action and a policy's
 * auditAnnotations end up as one `audit` line per request in the server's JSON log, with the
 * request's verb, resource and user and the annotations Kubernetes would record.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { jsonLogger } from '../../src/observability/logger.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';

const ADM = '/apis/admissionregistration.orch.io/v1';
const VAP = `${ADM}/validatingadmissionpolicies`;
const VAPB = `${ADM}/validatingadmissionpolicybindings`;
const events = (ns: string) => `/apis/events.orch.io/v1/namespaces/${ns}/events`;
const FAILURE = 'validation.policy.admission.orch.io/validation_failure';

let srv: TestServer;
const lines: any[] = [];
beforeAll(async () => {
  const stream = new PassThrough();
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    for (const p of parts) lines.push(JSON.parse(p));
  });
  srv = await startServer({ logger: jsonLogger(stream) });
});
afterAll(async () => {
  await srv?.stop();
});

const eventRule = { apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE'] };
let n = 0;

async function created(path: string, body: unknown): Promise<any> {
  const r = await call(srv.url, 'POST', path, body);
  expect(r.status, r.text).toBe(201);
  return r.body;
}

/**
 * A policy on Event creates and its bindings, and a fresh namespace for the test's requests: the
 * policy matches only that namespace, so the policies of earlier tests stay out of later ones.
 */
async function install(name: string, spec: Record<string, unknown>, bindings: Record<string, unknown>[]): Promise<string> {
  const matchConstraints = { resourceRules: [eventRule], namespaceSelector: { matchLabels: { 'audit-test': name } } };
  await created(VAP, { apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec: { matchConstraints, ...spec } });
  for (const [i, b] of bindings.entries()) {
    await created(VAPB, { apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: `${name}-b${i}` }, spec: { policyName: name, ...b } });
  }
  const ns = `audit-${++n}`;
  await created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'audit-test': name } } });
  return ns;
}

const event = (name: string, over: Record<string, unknown> = {}): any => ({ ...fixtures.event(), metadata: { name }, ...over });

/** Creates an event and returns the answer and the audit line written for that request (if any). */
async function createAudited(ns: string, body: any): Promise<{ status: number; warning: string | null; line: any | undefined; body: any }> {
  const before = lines.length;
  const r = await call(srv.url, 'POST', events(ns), body);
  let line: any;
  for (let i = 0; i < 50 && !line; i++) {
    line = lines.slice(before).find((l) => l.msg === 'audit' && l.objectRef?.namespace === ns);
    if (!line) await new Promise((res) => setTimeout(res, 10));
  }
  return { status: r.status, warning: r.headers.get('warning'), line, body: r.body };
}

describe('Audit validation action', () => {
  test('a failure is admitted, unwarned, and recorded as the validation_failure annotation', async () => {
    const ns = await install('audited', { validations: [{ expression: 'true' }, { expression: "object.type == 'Warning'", message: 'only warnings' }] }, [{ validationActions: ['Audit'] }]);
    const r = await createAudited(ns, event('a1'));
    expect(r.status).toBe(201);
    expect(r.warning).toBeNull();
    expect(r.line).toMatchObject({
      level: 'info',
      msg: 'audit',
      stage: 'ResponseComplete',
      verb: 'create',
      requestURI: events(ns),
      user: { username: 'system:anonymous', groups: ['system:unauthenticated'] },
      objectRef: { resource: 'events', namespace: ns, apiGroup: 'events.orch.io', apiVersion: 'v1' },
      responseStatus: { code: 201 },
    });
    expect(Object.keys(r.line.annotations)).toEqual([FAILURE]);
    // The value is a JSON list, as Kubernetes writes it; expressionIndex is the failing validation's.
    expect(JSON.parse(r.line.annotations[FAILURE])).toEqual([{ message: 'only warnings', policy: 'audited', binding: 'audited-b0', expressionIndex: 1, validationActions: ['Audit'] }]);
    // A request that passes has nothing to audit: no line.
    const ok = await createAudited(ns, event('a2', { type: 'Warning' }));
    expect(ok.status).toBe(201);
    expect(ok.line).toBeUndefined();
  });

  test('of several failures of one request, the first is recorded (an annotation is never overwritten)', async () => {
    const ns = await install(
      'audited-twice',
      {
        validations: [
          { expression: 'false', message: 'first' },
          { expression: 'false', message: 'second' },
        ],
      },
      [{ validationActions: ['Audit'] }, { validationActions: ['Audit'] }],
    );
    const r = await createAudited(ns, event('t1'));
    expect(r.status).toBe(201);
    expect(JSON.parse(r.line.annotations[FAILURE])).toEqual([{ message: 'first', policy: 'audited-twice', binding: 'audited-twice-b0', expressionIndex: 0, validationActions: ['Audit'] }]);
  });

  test('Deny with Audit refuses the write and still records it, with the refusal code', async () => {
    const ns = await install('deny-audit', { validations: [{ expression: 'false', message: 'never' }] }, [{ validationActions: ['Deny', 'Audit'] }]);
    const r = await createAudited(ns, event('d1'));
    expect(r.status).toBe(422);
    expect(r.line.responseStatus).toMatchObject({ code: 422, status: 'Failure', reason: 'Invalid' });
    expect(JSON.parse(r.line.annotations[FAILURE])).toEqual([{ message: 'never', policy: 'deny-audit', binding: 'deny-audit-b0', expressionIndex: 0, validationActions: ['Deny', 'Audit'] }]);
  });
});

describe('auditAnnotations', () => {
  test('each value is recorded as <policy>/<key>; null and blank values add none', async () => {
    const ns = await install(
      'annotated',
      {
        auditAnnotations: [
          { key: 'reason', valueExpression: "'reason is ' + object.reason" },
          { key: 'nothing', valueExpression: 'null' },
          { key: 'maybe', valueExpression: "object.type == 'Warning' ? 'warned' : '  '" },
        ],
      },
      [{ validationActions: ['Deny'] }],
    );
    const r = await createAudited(ns, event('n1', { reason: 'Scheduled' }));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.line.annotations).toEqual({ 'annotated/reason': 'reason is Scheduled' });
    const w = await createAudited(ns, event('n2', { reason: 'Pulled', type: 'Warning' }));
    expect(w.line.annotations).toEqual({ 'annotated/reason': 'reason is Pulled', 'annotated/maybe': 'warned' });
  });

  test('values of several bindings are collected: the same value once, different ones joined by ", "', async () => {
    for (const p of ['param-a', 'param-b']) await created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: p } });
    const ns = await install(
      'by-param',
      {
        paramKind: { apiVersion: 'v1', kind: 'Namespace' },
        auditAnnotations: [
          { key: 'param', valueExpression: 'params.metadata.name' },
          { key: 'same', valueExpression: "'one value'" },
        ],
      },
      [
        { validationActions: ['Deny'], paramRef: { name: 'param-a', parameterNotFoundAction: 'Deny' } },
        { validationActions: ['Deny'], paramRef: { name: 'param-b', parameterNotFoundAction: 'Deny' } },
      ],
    );
    const r = await createAudited(ns, event('p1'));
    expect(r.status).toBe(201);
    expect(r.line.annotations).toEqual({ 'by-param/param': 'param-a, param-b', 'by-param/same': 'one value' });
  });

  test('an error refuses the request under failurePolicy Fail and is skipped under Ignore; a non-string value always refuses', async () => {
    const failing = await install('ann-fail', { auditAnnotations: [{ key: 'count', valueExpression: "'n=' + string(object.series.count)" }] }, [{ validationActions: ['Warn'] }]);
    const refused = await createAudited(failing, event('e1'));
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(
      /^events\.events\.orch\.io "e1" is forbidden: ValidatingAdmissionPolicy 'ann-fail' with binding 'ann-fail-b0' denied request: expression '.*' resulted in error: /,
    );

    const ignoring = await install('ann-ignore', { failurePolicy: 'Ignore', auditAnnotations: [{ key: 'count', valueExpression: "'n=' + string(object.series.count)" }] }, [
      { validationActions: ['Deny'] },
    ]);
    const admitted = await createAudited(ignoring, event('e2'));
    expect(admitted.status).toBe(201);
    expect(admitted.line?.annotations?.['ann-ignore/count']).toBeUndefined();
    const counted = await createAudited(ignoring, event('e3', { series: { count: 3, lastObservedTime: '2026-01-02T03:04:05.123456Z' } }));
    expect(counted.line.annotations['ann-ignore/count']).toBe('n=3');

    const wrongType = await install('ann-int', { failurePolicy: 'Ignore', auditAnnotations: [{ key: 'n', valueExpression: 'dyn(1)' }] }, [{ validationActions: ['Audit'] }]);
    const r = await createAudited(wrongType, event('e4'));
    expect(r.status).toBe(422);
    expect(r.body.message).toContain("denied request: valueExpression 'dyn(1)' resulted in unsupported return type: int. Return type must be either string or null.");
  });
});
