/**
 * Error answers as Kubernetes sends them: optimistic locking, AlreadyExists, NotFound, namespaces
 * that do not exist, apiVersion/kind checked against the path, unknown paths and methods.
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { kindCase, unique } from './support.js';

const file = serverForFile();

const vap = kindCase('ValidatingAdmissionPolicy');
const map = kindCase('MutatingAdmissionPolicy');
const event = kindCase('Event');
const ADM = 'admissionregistration.orch.io';

describe('conflicts', () => {
  it('refuses a replace carrying a stale resourceVersion (409 Conflict) and keeps the newer write', async () => {
    const name = unique('stale');
    const v1 = (await call(file.base, 'POST', vap.collection(), vap.make(name))).body;
    const v2 = await call(file.base, 'PUT', vap.item(name), { ...v1, spec: { ...v1.spec, failurePolicy: 'Ignore' } });
    expect(v2.status).toBe(200);
    const stale = await call(file.base, 'PUT', vap.item(name), { ...v1, metadata: { ...v1.metadata, labels: { late: 'yes' } } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      details: { name, group: ADM, kind: 'validatingadmissionpolicies' },
    });
    expect(stale.body.message).toBe(
      `Operation cannot be fulfilled on validatingadmissionpolicies.${ADM} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
    const now = (await call(file.base, 'GET', vap.item(name))).body;
    expect(now.metadata.labels).toBeUndefined();
    expect(now.spec.failurePolicy).toBe('Ignore');
    // Without a resourceVersion: a policy allows no unconditional update (kube-apiserver's strategy says so).
    const { resourceVersion: _rv, ...meta } = v1.metadata;
    expect((await call(file.base, 'PUT', vap.item(name), { ...v1, metadata: meta })).status).toBe(422);
  });

  it('refuses creating an object that exists (409 AlreadyExists)', async () => {
    const name = unique('dup');
    expect((await call(file.base, 'POST', vap.collection(), vap.make(name))).status).toBe(201);
    const again = await call(file.base, 'POST', vap.collection(), vap.make(name));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ reason: 'AlreadyExists', code: 409, details: { name, group: ADM, kind: 'validatingadmissionpolicies' } });
    expect(again.body.message).toBe(`validatingadmissionpolicies.${ADM} "${name}" already exists`);
  });

  it('refuses a resourceVersion on create (400)', async () => {
    const obj = vap.make(unique('rvcreate'));
    obj.metadata.resourceVersion = '5';
    const r = await call(file.base, 'POST', vap.collection(), obj);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  });
});

describe('not found', () => {
  it('answers a missing object with 404 NotFound and details {name, group, kind}', async () => {
    const name = unique('missing');
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await call(file.base, method, vap.item(name), method === 'PUT' ? vap.make(name) : undefined);
      expect(r.status, method).toBe(404);
      expect(r.body, method).toMatchObject({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: `validatingadmissionpolicies.${ADM} "${name}" not found`,
        details: { name, group: ADM, kind: 'validatingadmissionpolicies' },
      });
    }
    const core = await call(file.base, 'GET', `/api/v1/namespaces/${name}`);
    expect(core.status).toBe(404);
    expect(core.body.message).toBe(`namespaces "${name}" not found`);
    expect(core.body.details).toEqual({ name, kind: 'namespaces' });
  });

  it('refuses a namespaced object in a namespace that does not exist, and `default` exists from the start', async () => {
    const nsName = unique('nowhere');
    const r = await call(file.base, 'POST', event.collection(nsName), event.make(unique('ev')));
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ reason: 'NotFound', message: `namespaces "${nsName}" not found`, details: { name: nsName, kind: 'namespaces' } });
    expect((await call(file.base, 'GET', event.collection(nsName))).body.items).toEqual([]);

    const def = await call(file.base, 'GET', '/api/v1/namespaces/default');
    expect(def.status).toBe(200);
    expect(def.body.status).toMatchObject({ phase: 'Active' });

    expect((await call(file.base, 'POST', '/api/v1/namespaces', { metadata: { name: nsName } })).status).toBe(201);
    expect((await call(file.base, 'POST', event.collection(nsName), event.make(unique('ev')))).status).toBe(201);
  });

  it('refuses an object whose namespace differs from the path (400)', async () => {
    const obj = event.make(unique('ev'));
    obj.metadata.namespace = 'kube-system';
    const r = await call(file.base, 'POST', event.collection('default'), obj);
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe('BadRequest');
  });

  it('refuses a replace whose body names no object or another one (400), as kube-apiserver checks the name', async () => {
    const name = unique('named');
    const created = (await call(file.base, 'POST', vap.collection(), vap.make(name))).body;
    const { name: _n, ...unnamed } = created.metadata;
    const none = await call(file.base, 'PUT', vap.item(name), { ...created, metadata: unnamed });
    expect([none.status, none.body.reason, none.body.message]).toEqual([400, 'BadRequest', `the name of the object (${name} based on URL) was undeterminable: name must be provided`]);
    const other = await call(file.base, 'PUT', vap.item(name), { ...created, metadata: { ...created.metadata, name: 'other' } });
    expect([other.status, other.body.message]).toEqual([400, `the name of the object (other) does not match the name on the URL (${name})`]);
    expect((await call(file.base, 'GET', vap.item(name))).body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('answers an unknown path with a 404 Status and an unsupported method with 405', async () => {
    for (const path of ['/apis/nothing.example.com/v1/things', '/no/such/path', `/apis/${ADM}/v1/validatingadmissionpolicies/a/b/c`]) {
      const r = await call(file.base, 'GET', path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
      expect(r.headers.get('content-type'), path).toMatch(/^application\/json/);
    }
    const post = await call(file.base, 'POST', vap.item(unique('x')), vap.make('x'));
    expect(post.status).toBe(405);
    expect(post.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
    const put = await call(file.base, 'PUT', vap.collection(), vap.make('x'));
    expect(put.status).toBe(405);
  });
});

describe('apiVersion and kind of the body against the path', () => {
  it('fills in an absent apiVersion and kind', async () => {
    const name = unique('bare');
    const { apiVersion: _a, kind: _k, ...bare } = vap.make(name);
    const r = await call(file.base, 'POST', vap.collection(), bare);
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ apiVersion: `${ADM}/v1`, kind: 'ValidatingAdmissionPolicy' });
  });

  it('refuses a wrong kind (400) and an apiVersion the path does not serve (400)', async () => {
    const wrongKind = await call(file.base, 'POST', vap.collection(), { ...vap.make(unique('wk')), kind: 'MutatingAdmissionPolicy' });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(wrongKind.body.message).toContain('MutatingAdmissionPolicy');

    for (const apiVersion of [`${ADM}/v9`, 'example.com/v1', 'v1', `${ADM}/v1beta1`]) {
      const name = unique('wv');
      const r = await call(file.base, 'POST', vap.collection(), { ...vap.make(name), apiVersion });
      expect(r.status, apiVersion).toBe(400);
      expect(r.body.reason, apiVersion).toBe('BadRequest');
      expect((await call(file.base, 'GET', vap.item(name))).status).toBe(404);
    }
  });

  it('takes a MutatingAdmissionPolicy written at v1beta1 and serves it at every version', async () => {
    const name = unique('beta');
    const beta = '/apis/admissionregistration.orch.io/v1beta1/mutatingadmissionpolicies';
    const created = await call(file.base, 'POST', beta, { ...map.make(name), apiVersion: `${ADM}/v1beta1` });
    expect(created.status, created.text).toBe(201);
    expect(created.body.apiVersion).toBe(`${ADM}/v1beta1`);
    for (const v of ['v1', 'v1beta1', 'v1alpha1']) {
      const got = await call(file.base, 'GET', `/apis/${ADM}/${v}/mutatingadmissionpolicies/${name}`);
      expect(got.status, v).toBe(200);
      expect(got.body.apiVersion, v).toBe(`${ADM}/${v}`);
      expect(got.body.spec, v).toEqual(created.body.spec);
      const list = await call(file.base, 'GET', `/apis/${ADM}/${v}/mutatingadmissionpolicies`);
      expect(list.body.apiVersion, v).toBe(`${ADM}/${v}`);
      expect(new Set(list.body.items.map((o: any) => o.apiVersion)), v).toEqual(new Set([`${ADM}/${v}`]));
    }
    // A body in another served version of the same kind is converted, as Kubernetes' decoder does.
    const mixed = await call(file.base, 'POST', `/apis/${ADM}/v1alpha1/mutatingadmissionpolicies`, map.make(unique('mixed')));
    expect(mixed.status, mixed.text).toBe(201);
    expect(mixed.body.apiVersion).toBe(`${ADM}/v1alpha1`);
  });
});
