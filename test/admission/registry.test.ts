/**
 * The admission object on a real server's store, called directly: expressions compile once per
 * policy generation and target kind, variables and request.userInfo reach expressions, and a
 * paramKind that names no served kind is a configuration error failurePolicy governs.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ValidatingAdmission, runWithAdmissionContext } from '../../src/admission/index.js';
import { admissionAttributes } from '../../src/admission/attributes.js';
import type { KubeObject } from '../../src/api/types.js';
import { AdmissionError } from '../../src/admission/errors.js';
import { toStatus } from '../../src/http/respond/errors.js';
import type { Authorizer } from '../../src/api/authorization.js';
import { kinds } from '../../src/resources/kinds.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';

const ADM = '/apis/admissionregistration.orch.io/v1';
const eventKind = kinds.find((k) => k.kind === 'Event')!;
let srv: TestServer;
let adm: ValidatingAdmission;
beforeAll(async () => {
  srv = await startServer();
  adm = new ValidatingAdmission(srv.store, kinds);
});
afterAll(async () => {
  await srv?.stop();
});

const rule = { apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE'] };
async function install(name: string, spec: Record<string, unknown>, bindingSpec: Record<string, unknown> = {}): Promise<void> {
  const p = await call(srv.url, 'POST', `${ADM}/validatingadmissionpolicies`, {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: [rule] }, ...spec },
  });
  expect(p.status, p.text).toBe(201);
  const b = await call(srv.url, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `${name}-b` },
    spec: { policyName: name, validationActions: ['Deny'], ...bindingSpec },
  });
  expect(b.status, b.text).toBe(201);
}
async function remove(name: string): Promise<void> {
  await call(srv.url, 'DELETE', `${ADM}/validatingadmissionpolicybindings/${name}-b`);
  await call(srv.url, 'DELETE', `${ADM}/validatingadmissionpolicies/${name}`);
}
/** The policies' verdict on a CREATE of e, as the object store would ask for it. */
const validateCreate = (e: KubeObject, username: string, admission = adm) =>
  admission.validate(admissionAttributes(srv.store, undefined, 'CREATE', eventKind, e, undefined, user(username), { dryRun: false }));
const user = (username: string) => ({ username, uid: '', groups: ['dev'], extra: {} });
/** Admits a CREATE of an event as `username`: undefined when admitted, else the denial message. */
async function admit(over: Record<string, unknown> = {}, username = 'alice', admission = adm): Promise<string | undefined> {
  const e = { ...fixtures.event(), ...over };
  e.metadata = { name: 'e', namespace: 'default' };
  try {
    await runWithAdmissionContext({ user: user(username), warn() {}, annotate() {} }, () => validateCreate(e, username, admission));
    return undefined;
  } catch (err) {
    if (err instanceof AdmissionError) return toStatus(err).message;
    throw err;
  }
}

describe('policy registry', () => {
  test('a policy compiles once per generation; a new generation compiles again', async () => {
    await install('once', { validations: [{ expression: "object.note != 'x'" }] });
    const before = adm.registry.compiles;
    expect(await admit({ note: 'x' })).toMatch(/failed expression: object.note != 'x'$/);
    expect(await admit({ note: 'y' })).toBeUndefined();
    expect(await admit({ note: 'x' })).toBeDefined();
    expect(adm.registry.compiles - before).toBe(1);
    const cur = (await call(srv.url, 'GET', `${ADM}/validatingadmissionpolicies/once`)).body;
    cur.spec.validations[0].expression = "object.note != 'z'";
    expect((await call(srv.url, 'PUT', `${ADM}/validatingadmissionpolicies/once`, cur)).status).toBe(200);
    expect(await admit({ note: 'x' })).toBeUndefined();
    expect(await admit({ note: 'z' })).toBeDefined();
    expect(adm.registry.compiles - before).toBe(2);
    await remove('once');
    expect(await admit({ note: 'z' })).toBeUndefined();
  });

  test('variables and request.userInfo reach the expressions', async () => {
    await install('vars', {
      variables: [{ name: 'owner', expression: "request.userInfo.username + '/' + object.reportingController" }],
      validations: [{ expression: "variables.owner != 'mallory/orch.io/scheduler'", messageExpression: "'refused for ' + variables.owner" }],
    });
    expect(await admit({}, 'alice')).toBeUndefined();
    expect(await admit({}, 'mallory')).toMatch(/denied request: refused for mallory\/orch.io\/scheduler$/);
    await remove('vars');
  });

  test('messageExpression: a multi-line or non-string result falls back to message; several condition errors are listed', async () => {
    await install('msgs', {
      validations: [
        { expression: "object.note != 'nl'", messageExpression: "'two\\nlines'", message: '  trimmed static  ' },
        { expression: "object.note != 'none'", messageExpression: "object.note == 'none' ? string(object.series.count) : 'x'" },
      ],
    });
    expect(await admit({ note: 'nl' })).toMatch(/denied request: trimmed static$/);
    expect(await admit({ note: 'none' })).toMatch(/denied request: failed expression: object.note != 'none'$/);
    await remove('msgs');
    await install('conds', {
      matchConditions: [
        { name: 'a', expression: 'object.series.count > 0' },
        { name: 'b', expression: "object.series.lastObservedTime != ''" },
      ],
      validations: [{ expression: 'true' }],
    });
    expect(await admit()).toMatch(/denied request: \[expression 'object.series.count > 0' resulted in error: .*, expression 'object.series.lastObservedTime != ''' resulted in error: .*\]$/);
    await remove('conds');
  });

  test('a paramKind naming no served kind: Fail refuses, Ignore admits', async () => {
    await install('nokind', { paramKind: { apiVersion: 'example.com/v1', kind: 'Nothing' }, validations: [{ expression: 'true' }] }, { paramRef: { name: 'p', parameterNotFoundAction: 'Deny' } });
    // a policy-level error: the message names no binding
    expect(await admit()).toMatch(/ValidatingAdmissionPolicy 'nokind' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com\/v1, Kind=Nothing'$/);
    const cur = (await call(srv.url, 'GET', `${ADM}/validatingadmissionpolicies/nokind`)).body;
    cur.spec.failurePolicy = 'Ignore';
    expect((await call(srv.url, 'PUT', `${ADM}/validatingadmissionpolicies/nokind`, cur)).status).toBe(200);
    expect(await admit()).toBeUndefined();
    await remove('nokind');
  });

  test('with failurePolicy Fail an evaluation error goes where validationActions say (Warn: a warning)', async () => {
    await install('warn-err', { validations: [{ expression: 'object.series.count > 0' }] }, { validationActions: ['Warn'] });
    const warnings: string[] = [];
    const e = { ...fixtures.event(), metadata: { name: 'e', namespace: 'default' } };
    await runWithAdmissionContext({ user: user('a'), warn: (w) => warnings.push(...w), annotate() {} }, () => validateCreate(e, 'a'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^Validation failed for ValidatingAdmissionPolicy 'warn-err' with binding 'warn-err-b': expression 'object.series.count > 0' resulted in error: /);
    await remove('warn-err');
  });

  test('an authorizer check reached only through a variable waits for a chain that answers later', async () => {
    // Only alice may list events, and the chain answers a tick later (as a webhook would).
    const later: Authorizer = { authorize: (at) => new Promise((resolve) => setTimeout(() => resolve({ decision: at.user.username === 'alice' && at.verb === 'list' ? 'allow' : 'noOpinion' }), 1)) };
    const withChain = new ValidatingAdmission(srv.store, kinds, later);
    await install('via-var', {
      variables: [{ name: 'mayList', expression: "authorizer.group('events.orch.io').resource('events').namespace('default').check('list').allowed()" }],
      validations: [{ expression: 'variables.mayList', message: 'only listers' }],
    });
    expect(await admit({}, 'alice', withChain)).toBeUndefined();
    expect(await admit({}, 'bob', withChain)).toMatch(/denied request: only listers$/);
    await remove('via-var');
    withChain.registry.close();
  });
});
