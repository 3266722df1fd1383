/**
 * Admission's hooks answer at once when they have nothing to run for a write: no promise, so the
 * registry awaits nothing (a create with no policy takes no turn of microtasks in admission). With a
 * policy that applies, validate runs it and the registry awaits its answer.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { admissionFor, runWithAdmissionContext } from '../../src/admission/index.js';
import { kinds } from '../../src/resources/kinds.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';

const ADM = '/apis/admissionregistration.orch.io/v1';
const eventKind = kinds.find((k) => k.kind === 'Event')!;
const user = { username: 'alice', uid: '', groups: ['dev'], extra: {} };
let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv?.stop();
});

const event = () => ({ ...fixtures.event(), metadata: { name: 'e', namespace: 'default' } });

test('with no policy for the kind, mutate hands back the object itself and validate returns nothing', () => {
  const hooks = admissionFor(srv.store, kinds)!;
  expect(hooks).toBeDefined();
  const e = event();
  const mutated = runWithAdmissionContext({ user, warn() {}, annotate() {} }, () => hooks.mutate('CREATE', eventKind, e, undefined, { dryRun: false }));
  expect(mutated).toBe(e);
  expect(runWithAdmissionContext({ user, warn() {}, annotate() {} }, () => hooks.validate('CREATE', eventKind, e, undefined, { dryRun: false }))).toBeUndefined();
});

test('a policy that applies is run: validate answers with a promise, and the registry awaits its refusal', async () => {
  const rule = { apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE'] };
  const p = await call(srv.url, 'POST', `${ADM}/validatingadmissionpolicies`, {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'no-e' },
    spec: { matchConstraints: { resourceRules: [rule] }, validations: [{ expression: "object.metadata.name != 'e'" }] },
  });
  expect(p.status, p.text).toBe(201);
  const b = await call(srv.url, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'no-e-b' },
    spec: { policyName: 'no-e', validationActions: ['Deny'] },
  });
  expect(b.status, b.text).toBe(201);
  const hooks = admissionFor(srv.store, kinds)!;
  const ctx = { user, warn() {}, annotate() {} };
  const checked = runWithAdmissionContext(ctx, () => hooks.validate('CREATE', eventKind, event(), undefined, { dryRun: false }));
  expect(checked).toBeInstanceOf(Promise);
  await expect(checked).rejects.toThrow();
  // Through the registry, which awaits only a promise: the denial is the answer.
  const created = await call(srv.url, 'POST', '/apis/events.orch.io/v1/namespaces/default/events', event());
  expect(created.status, created.text).toBe(422);
});
