/**
 * A ValidatingAdmissionPolicy that matches CustomResourceDefinitions, on a real orchd. A CRD's own
 * schema is recursive (JSONSchemaProps holds JSONSchemaProps), so its type is cut where it refers
 * to itself, as Kubernetes' resolver cuts a circular $ref (an object of unknown fields), and the
 * policy answers what it decides: never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crdOf } from '../helpers/crd.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { created as createdAt } from './support.js';
import { sleep } from '../helpers/poll.js';

const ADM = '/apis/admissionregistration.orch.io/v1';
const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const crdRule = { apiGroups: ['apiextensions.orch.io'], apiVersions: ['v1'], resources: ['customresourcedefinitions'], operations: ['CREATE', 'UPDATE'] };

let server: TestServer;
const created = (path: string, body: unknown): Promise<any> => createdAt(server.url, path, body);

async function policy(name: string, validations: unknown[]): Promise<void> {
  await created(`${ADM}/validatingadmissionpolicies`, {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: [crdRule] }, validations },
  });
  await created(`${ADM}/validatingadmissionpolicybindings`, {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `${name}-b` },
    spec: { policyName: name, validationActions: ['Deny'] },
  });
}

/** Policies take effect when the registry has seen them: retry the write until it is decided. */
async function writeUntil(method: string, path: string, body: unknown, ok: (status: number) => boolean): Promise<{ status: number; body: any }> {
  for (const deadline = Date.now() + 10_000; ; await sleep(20)) {
    const r = await call(server.url, method, path, body);
    if (ok(r.status) || Date.now() > deadline) return r;
  }
}

const schema = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } } } } };

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('a ValidatingAdmissionPolicy on CustomResourceDefinitions', () => {
  it('`expression: "true"` lets every CRD through, create and update', async () => {
    await policy('all-crds', [{ expression: 'true' }]);
    const c = await writeUntil('POST', CRDS, crdOf('example.com', 'widgets', 'Widget', { schema }), (s) => s !== 500);
    expect(c.status).toBe(201);
    const u = await call(server.url, 'PATCH', `${CRDS}/widgets.example.com`, { metadata: { labels: { a: 'b' } } }, { 'Content-Type': 'application/merge-patch+json' });
    expect(u.status).toBe(200);
  });

  it('a rule reading the recursive schema is type-checked and decides: a CRD with too many top-level properties is denied', async () => {
    await policy('few-props', [
      {
        expression: 'object.spec.versions.all(v, !has(v.schema) || !has(v.schema.openAPIV3Schema.properties) || v.schema.openAPIV3Schema.properties.size() <= 2)',
        message: 'too many properties',
      },
    ]);
    const many = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } } };
    const denied = await writeUntil('POST', CRDS, crdOf('example.com', 'gadgets', 'Gadget', { schema: many }), (s) => s === 422);
    expect(denied.status).toBe(422);
    expect(denied.body.message).toContain("ValidatingAdmissionPolicy 'few-props' with binding 'few-props-b' denied request: too many properties");
    const ok = await call(server.url, 'POST', CRDS, crdOf('example.com', 'gizmos', 'Gizmo', { schema }));
    expect(ok.status).toBe(201);
  });
});
