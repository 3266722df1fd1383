/**
 * What kube-apiserver's generic store refuses or stamps on an update or a delete, over HTTP on a real
 * orchd: kinds whose strategy disallows unconditional updates (custom resources, CRDs, admission
 * policies, Leases) need metadata.resourceVersion on PUT and on /status; a delete that finalizers
 * hold bumps metadata.generation once; a 422 names the kind with its group (`Kind.group`).
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { crdOf } from '../helpers/crd.js';

const file = serverForFile();
const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const CERTS = '/apis/cert-manager.io/v1/namespaces/default/certificates';

const certificates = crdOf('cert-manager.io', 'certificates', 'Certificate', {
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: { type: 'object', required: ['secretName'], properties: { secretName: { type: 'string' } } },
            status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
        },
      },
    },
  ],
});
const cert = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name, ...extra },
  spec: { secretName: `${name}-tls` },
});
const withoutVersion = (o: any) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });

async function defineCertificates(): Promise<void> {
  const r = await call(file.base, 'POST', CRDS, certificates);
  expect([201, 409]).toContain(r.status);
}

describe('updates without metadata.resourceVersion', () => {
  it('a custom resource: 422 on the resource and on /status, with the words and details of kube-apiserver; with it, 200', async () => {
    await defineCertificates();
    const created = await call(file.base, 'POST', CERTS, cert('unconditional'));
    expect(created.status).toBe(201);
    for (const path of [`${CERTS}/unconditional`, `${CERTS}/unconditional/status`]) {
      const r = await call(file.base, 'PUT', path, withoutVersion({ ...created.body, status: { ready: true } }));
      expect(r.status, path).toBe(422);
      expect(r.body).toMatchObject({
        reason: 'Invalid',
        message: 'certificates.cert-manager.io "unconditional" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
        details: { name: 'unconditional', group: 'cert-manager.io', kind: 'certificates', causes: [{ reason: 'FieldValueInvalid', field: 'metadata.resourceVersion' }] },
      });
    }
    const ok = await call(file.base, 'PUT', `${CERTS}/unconditional/status`, { ...created.body, status: { ready: true } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toEqual({ ready: true });
  });

  it('a merge patch needs none (it applies to the stored version), as kube-apiserver', async () => {
    await defineCertificates();
    expect((await call(file.base, 'POST', CERTS, cert('patched'))).status).toBe(201);
    const r = await call(file.base, 'PATCH', `${CERTS}/patched`, { metadata: { labels: { a: 'b' } } }, { 'Content-Type': 'application/merge-patch+json' });
    expect(r.status).toBe(200);
  });

  it.each([
    ['a CustomResourceDefinition', CRDS, () => crdOf('unc.example.com', 'things', 'Thing'), 'customresourcedefinitions.apiextensions.orch.io'],
    [
      'a ValidatingAdmissionPolicy',
      '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies',
      () => ({
        apiVersion: 'admissionregistration.orch.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'unc' },
        spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['namespaces'] }] }, validations: [{ expression: 'true' }] },
      }),
      'validatingadmissionpolicies.admissionregistration.orch.io',
    ],
  ])('%s: 422', async (_what, collection, body, qualified) => {
    const created = await call(file.base, 'POST', collection, body());
    expect(created.status).toBe(201);
    const r = await call(file.base, 'PUT', `${collection}/${created.body.metadata.name}`, withoutVersion(created.body));
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(`${qualified} "${created.body.metadata.name}" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`);
  });

  it('a kind that allows unconditional updates (Namespace) replaces what is stored', async () => {
    const ns = await call(file.base, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'unconditional' } });
    expect(ns.status).toBe(201);
    const r = await call(file.base, 'PUT', '/api/v1/namespaces/unconditional', withoutVersion({ ...ns.body, metadata: { ...ns.body.metadata, labels: { a: 'b' } } }));
    expect(r.status).toBe(200);
  });
});

describe('a delete that finalizers hold', () => {
  it('bumps metadata.generation by one with the deletionTimestamp, and not again on a second delete', async () => {
    await defineCertificates();
    const created = await call(file.base, 'POST', CERTS, cert('held', { finalizers: ['example.com/hold'] }));
    expect(created.body.metadata.generation).toBe(1);
    const del = await call(file.base, 'DELETE', `${CERTS}/held`);
    expect(del.status).toBe(202);
    expect(del.body.metadata).toMatchObject({ generation: 2, deletionTimestamp: expect.any(String) });
    const again = await call(file.base, 'DELETE', `${CERTS}/held`);
    expect(again.body.metadata.generation).toBe(2);
    const got = await call(file.base, 'GET', `${CERTS}/held`);
    const released = await call(file.base, 'PUT', `${CERTS}/held`, { ...got.body, metadata: { ...got.body.metadata, finalizers: [] } });
    expect(released.status).toBe(200);
    expect((await call(file.base, 'GET', `${CERTS}/held`)).status).toBe(404);
  });
});

describe('422 names the kind as kube-apiserver does', () => {
  it('Kind.group for a custom resource', async () => {
    await defineCertificates();
    const r = await call(file.base, 'POST', CERTS, { ...cert('no-secret'), spec: {} });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('Certificate.cert-manager.io "no-secret" is invalid: spec.secretName: Required value');
    expect(r.body.details).toMatchObject({ kind: 'Certificate', group: 'cert-manager.io' });
  });

  it('Kind alone in the core group', async () => {
    const r = await call(file.base, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'Not_A_Label' } });
    expect(r.status).toBe(422);
    expect(r.body.message).toMatch(/^Namespace "Not_A_Label" is invalid: metadata\.name: Invalid value/);
  });
});
