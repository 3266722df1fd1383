/**
 * A namespace's deletion as kube-apiserver and its namespace controller do it, over HTTP on a real
 * orchd: the `kubernetes` finalizer in spec.finalizers from create on, Terminating with a
 * deletionTimestamp, content deleted and waited for (finalizers included) with the conditions saying
 * what is left, 403 on creates meanwhile, and the namespace gone only once it is empty.
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { crdOf } from '../helpers/crd.js';
import { eventually } from '../helpers/poll.js';

const file = serverForFile();
const NS = '/api/v1/namespaces';
const certs = (ns: string) => `/apis/cert-manager.io/v1/namespaces/${ns}/certificates`;
const roles = (ns: string) => `/apis/rbac.authorization.orch.io/v1/namespaces/${ns}/roles`;
const cert = (name: string, finalizers?: string[]) => ({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, ...(finalizers ? { finalizers } : {}) }, spec: {} });
const role = (name: string) => ({ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name }, rules: [] });
const condition = (ns: any, type: string) => (ns.status.conditions ?? []).find((c: any) => c.type === type);

describe('namespace lifecycle', () => {
  it('a new namespace carries the kubernetes finalizer, which a main-resource update cannot remove', async () => {
    const created = await call(file.base, 'POST', NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin' }, spec: { finalizers: ['example.com/own'] } });
    expect(created.status).toBe(201);
    expect(created.body.spec.finalizers).toEqual(['example.com/own', 'kubernetes']);
    const put = await call(file.base, 'PUT', `${NS}/fin`, { ...created.body, spec: { finalizers: [] } });
    expect(put.status).toBe(200);
    expect(put.body.spec.finalizers).toEqual(['example.com/own', 'kubernetes']);
  });

  it('Terminating until its content is gone, finalizers included; creates meanwhile are 403; then the namespace goes', async () => {
    expect([201, 409]).toContain((await call(file.base, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', crdOf('cert-manager.io', 'certificates', 'Certificate'))).status);
    expect((await call(file.base, 'POST', NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } })).status).toBe(201);
    expect((await call(file.base, 'POST', certs('doomed'), cert('held', ['example.com/hold']))).status).toBe(201);
    expect((await call(file.base, 'POST', certs('doomed'), cert('free'))).status).toBe(201);
    expect((await call(file.base, 'POST', roles('doomed'), role('r'))).status).toBe(201);

    const del = await call(file.base, 'DELETE', `${NS}/doomed`);
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ metadata: { deletionTimestamp: expect.any(String) }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating' } });

    // What has no finalizer goes; the held Certificate stays, marked, and the conditions say so.
    await eventually(async () => (await call(file.base, 'GET', `${roles('doomed')}/r`)).status === 404 && (await call(file.base, 'GET', `${certs('doomed')}/free`)).status === 404);
    const ns = await eventually(async () => {
      const got = (await call(file.base, 'GET', `${NS}/doomed`)).body;
      return condition(got, 'NamespaceContentRemaining')?.status === 'True' && condition(got, 'NamespaceFinalizersRemaining') ? got : undefined;
    });
    expect(condition(ns, 'NamespaceContentRemaining')).toMatchObject({ reason: 'SomeResourcesRemain', message: 'Some resources are remaining: certificates.cert-manager.io has 1 resource instances' });
    expect(condition(ns, 'NamespaceFinalizersRemaining')).toMatchObject({
      status: 'True',
      reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    });
    expect(condition(ns, 'NamespaceDeletionContentFailure')).toMatchObject({ status: 'False', reason: 'ContentDeleted' });
    expect(ns.status.phase).toBe('Terminating');
    const held = (await call(file.base, 'GET', `${certs('doomed')}/held`)).body;
    expect(held.metadata.deletionTimestamp).toBeTruthy();

    const late = await call(file.base, 'POST', roles('doomed'), role('late'));
    expect(late.status).toBe(403);
    expect(late.body).toMatchObject({
      reason: 'Forbidden',
      message: 'roles.rbac.authorization.orch.io "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
    });

    // The last finalizer goes: the Certificate, then the namespace.
    expect((await call(file.base, 'PUT', `${certs('doomed')}/held`, { ...held, metadata: { ...held.metadata, finalizers: [] } })).status).toBe(200);
    await eventually(async () => (await call(file.base, 'GET', `${NS}/doomed`)).status === 404, { what: 'the namespace gone once empty' });
    // A namespace of the same name starts empty and Active.
    const again = await call(file.base, 'POST', NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    expect(again.body.status.phase).toBe('Active');
    expect((await call(file.base, 'GET', certs('doomed'))).body.items).toEqual([]);
  });

  it('an empty namespace goes at once after its delete, through the controller', async () => {
    expect((await call(file.base, 'POST', NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'empty' } })).status).toBe(201);
    expect((await call(file.base, 'DELETE', `${NS}/empty`)).status).toBe(200);
    await eventually(async () => (await call(file.base, 'GET', `${NS}/empty`)).status === 404);
  });
});
