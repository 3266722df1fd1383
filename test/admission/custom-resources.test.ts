/**
 * Admission matches custom resources like any other kind, on a real orchd: a ValidatingAdmissionPolicy
 * on a CRD's kind (its expressions typed by the CRD's schema, so a misspelt field is a warning of
 * the policy's type check), one whose params are another CRD's objects, a MutatingAdmissionPolicy
 * and a mutating webhook that change custom resources as they are written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { created as createdAt } from './support.js';
import { WebhookServer } from './webhook-server.js';
import { sleep } from '../helpers/poll.js';

const ADM = '/apis/admissionregistration.orch.io/v1';
const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const widgetRule = { apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'], operations: ['CREATE', 'UPDATE'] };

function crd(plural: string, kind: string, spec: Record<string, unknown>, scope = 'Namespaced'): any {
  return {
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope,
      names: { plural, kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } } } } }],
    },
  };
}
const widget = (name: string, size: number) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec: { size } });

let server: TestServer;
const hook = new WebhookServer();
const created = (path: string, body: unknown): Promise<any> => createdAt(server.url, path, body);

beforeAll(async () => {
  server = await startServer({ policyStatus: true });
  await hook.start();
  await created(CRDS, crd('widgets', 'Widget', { size: { type: 'integer' }, owner: { type: 'string' } }));
  await created(CRDS, crd('limits', 'Limit', { max: { type: 'integer' } }, 'Cluster'));
});
afterAll(async () => {
  await server?.stop();
  await hook.stop();
});

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 10_000; ; await sleep(10)) {
    const v = await read();
    if (ok(v) || Date.now() > deadline) return v;
  }
}

describe('admission of custom resources', () => {
  it("a ValidatingAdmissionPolicy denies a custom resource; its type check reads the CRD's schema", async () => {
    await created(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'small-widgets' },
      spec: {
        matchConstraints: { resourceRules: [widgetRule] },
        validations: [{ expression: 'object.spec.size <= 10', message: 'widgets are small' }, { expression: 'object.spec.colour != "red"' }],
      },
    });
    await created(`${ADM}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'small-widgets-b' },
      spec: { policyName: 'small-widgets', validationActions: ['Deny'] },
    });
    const denied = await call(server.url, 'POST', WIDGETS, widget('big', 20));
    expect(denied.status).toBe(422);
    expect(denied.body.message).toBe("widgets.example.com \"big\" is forbidden: ValidatingAdmissionPolicy 'small-widgets' with binding 'small-widgets-b' denied request: widgets are small");
    // The policy status controller type-checks the expressions against the Widget schema.
    const policy = await eventually(
      () => call(server.url, 'GET', `${ADM}/validatingadmissionpolicies/small-widgets`),
      (r) => r.body.status?.typeChecking !== undefined,
    );
    expect(policy.body.status.typeChecking.expressionWarnings).toEqual([{ fieldRef: 'spec.validations[1].expression', warning: expect.stringContaining("undefined field 'colour'") }]);
    await call(server.url, 'DELETE', `${ADM}/validatingadmissionpolicybindings/small-widgets-b`);
    await call(server.url, 'DELETE', `${ADM}/validatingadmissionpolicies/small-widgets`);
  });

  it("a policy whose params are another CRD's objects", async () => {
    await created('/apis/example.com/v1/limits', { apiVersion: 'example.com/v1', kind: 'Limit', metadata: { name: 'five' }, spec: { max: 5 } });
    await created(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'limited' },
      spec: {
        paramKind: { apiVersion: 'example.com/v1', kind: 'Limit' },
        matchConstraints: { resourceRules: [widgetRule] },
        validations: [{ expression: 'object.spec.size <= params.spec.max', messageExpression: "'at most ' + string(params.spec.max)" }],
      },
    });
    await created(`${ADM}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'limited-b' },
      spec: { policyName: 'limited', paramRef: { name: 'five', parameterNotFoundAction: 'Deny' }, validationActions: ['Deny'] },
    });
    expect((await call(server.url, 'POST', WIDGETS, widget('six', 6))).body.message).toMatch(/denied request: at most 5$/);
    expect((await call(server.url, 'POST', WIDGETS, widget('four', 4))).status).toBe(201);
    await call(server.url, 'DELETE', `${ADM}/validatingadmissionpolicybindings/limited-b`);
    await call(server.url, 'DELETE', `${ADM}/validatingadmissionpolicies/limited`);
  });

  it('a MutatingAdmissionPolicy and a mutating webhook change custom resources as they are written', async () => {
    await created(`${ADM}/mutatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'owned' },
      spec: {
        matchConstraints: { resourceRules: [widgetRule] },
        reinvocationPolicy: 'Never',
        mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{spec: Object.spec{owner: "platform"}}' } }],
      },
    });
    await created(`${ADM}/mutatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: 'owned-b' },
      spec: { policyName: 'owned' },
    });
    hook.on('/label', (review) => hook.allow(review, { patch: [{ op: 'add', path: '/metadata/labels', value: { seen: `${review.request.kind.kind}.${review.request.resource.resource}` } }] }));
    await created(`${ADM}/mutatingwebhookconfigurations`, {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'label' },
      webhooks: [{ name: 'label.example.com', clientConfig: { url: `${hook.url}/label`, caBundle: hook.caBundle }, rules: [widgetRule], sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    });
    const w = await created(WIDGETS, widget('mutated', 1));
    expect(w.spec).toEqual({ size: 1, owner: 'platform' });
    expect(w.metadata.labels).toEqual({ seen: 'Widget.widgets' });
    const review = hook.received.at(-1)!.review;
    expect(review.request).toMatchObject({
      kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      namespace: 'default',
      operation: 'CREATE',
    });
  });
});
