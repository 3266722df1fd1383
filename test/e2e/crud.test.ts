/**
 * Create, get, list, replace, delete and deletecollection for every kind orchd serves, over HTTP
 * against a real server with a real LevelDB.
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/poll.js';
import { call, serverForFile } from '../helpers/server.js';
import { apiVersionOfPath, KINDS, unique } from './support.js';

const file = serverForFile();

describe.each(KINDS.map((k) => [`${k.kind} at ${apiVersionOfPath(k.collection('default'))}`, k] as const))('%s', (_label, k) => {
  const ns = k.namespaced ? 'default' : undefined;

  it('creates (201), gets and lists the object', async () => {
    const name = unique('crud');
    const created = await call(file.base, 'POST', k.collection(ns), k.make(name));
    expect(created.status, created.text).toBe(201);
    expect(created.body.kind).toBe(k.kind);
    expect(created.body.apiVersion).toBe(apiVersionOfPath(k.collection('default')));
    expect(created.body.metadata.name).toBe(name);
    expect(created.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    if (k.namespaced) expect(created.body.metadata.namespace).toBe('default');
    else expect(created.body.metadata.namespace).toBeUndefined();

    const got = await call(file.base, 'GET', k.item(name, ns));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);

    const list = await call(file.base, 'GET', k.collection(ns));
    expect(list.status).toBe(200);
    expect(list.body.kind).toBe(`${k.kind}List`);
    expect(list.body.apiVersion).toBe(apiVersionOfPath(k.collection('default')));
    expect(Number(list.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(created.body.metadata.resourceVersion));
    expect(list.body.items.map((o: any) => o.metadata.name)).toContain(name);
  });

  it('replaces (PUT) the object and the change is read back', async () => {
    const name = unique('put');
    const created = (await call(file.base, 'POST', k.collection(ns), k.make(name))).body;
    const next = structuredClone(created);
    k.change(next);
    const put = await call(file.base, 'PUT', k.item(name, ns), next);
    expect(put.status, put.text).toBe(200);
    expect(k.changed(put.body)).toEqual(k.changed(next));
    expect(Number(put.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    expect(put.body.metadata.uid).toBe(created.metadata.uid);
    const got = await call(file.base, 'GET', k.item(name, ns));
    expect(k.changed(got.body)).toEqual(k.changed(next));
  });

  it('deletes the object (200 Success Status) and then it is gone', async () => {
    const name = unique('del');
    const created = (await call(file.base, 'POST', k.collection(ns), k.make(name))).body;
    const del = await call(file.base, 'DELETE', k.item(name, ns));
    expect(del.status, del.text).toBe(200);
    if (k.kind === 'Namespace') {
      // Held by the kubernetes finalizer: answered with the Terminating namespace, gone once the namespace controller has emptied it.
      expect(del.body).toMatchObject({ kind: 'Namespace', metadata: { name, uid: created.metadata.uid }, status: { phase: 'Terminating' } });
      await eventually(async () => (await call(file.base, 'GET', k.item(name, ns))).status === 404);
      return;
    }
    expect(del.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name, uid: created.metadata.uid } });
    // Kubernetes names the resource in details.kind, and leaves out the core group's "".
    expect(del.body.details.kind).toBe(k.collection(ns).split('/').pop());
    if (k.kind === 'Namespace') expect('group' in del.body.details).toBe(false);
    else expect(del.body.details.group).toBe(k.collection(ns).split('/')[2]);
    expect((await call(file.base, 'GET', k.item(name, ns))).status).toBe(404);
    expect((await call(file.base, 'DELETE', k.item(name, ns))).status).toBe(404);
  });

  it('deletes with a finalizer: 202 with the object marked, and it stays until the finalizer goes', async () => {
    const name = unique('fin');
    const obj = k.make(name);
    obj.metadata.finalizers = ['example.com/hold'];
    expect((await call(file.base, 'POST', k.collection(ns), obj)).status).toBe(201);
    const del = await call(file.base, 'DELETE', k.item(name, ns));
    // kube-apiserver answers a namespace delete 200 whatever holds it.
    expect(del.status, del.text).toBe(k.kind === 'Namespace' ? 200 : 202);
    expect(del.body.kind).toBe(k.kind);
    expect(del.body.metadata.deletionTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const held = await call(file.base, 'GET', k.item(name, ns));
    expect(held.status).toBe(200);
    expect(held.body.metadata.deletionTimestamp).toBe(del.body.metadata.deletionTimestamp);
    // The namespace controller writes a Terminating namespace's conditions meanwhile: a replace may have to read again.
    const put = await eventually(async () => {
      const cur = await call(file.base, 'GET', k.item(name, ns));
      cur.body.metadata.finalizers = [];
      const r = await call(file.base, 'PUT', k.item(name, ns), cur.body);
      return r.status === 409 && k.kind === 'Namespace' ? undefined : r;
    });
    expect(put.status, put.text).toBe(200);
    await eventually(async () => (await call(file.base, 'GET', k.item(name, ns))).status === 404);
  });

  it('deletecollection removes exactly the objects the labelSelector selects', async () => {
    const run = unique('sel');
    const names = [unique('dc'), unique('dc'), unique('dc')];
    for (const [i, name] of names.entries()) {
      const o = k.make(name);
      o.metadata.labels = { run, keep: i === 2 ? 'yes' : 'no' };
      expect((await call(file.base, 'POST', k.collection(ns), o)).status).toBe(201);
    }
    const del = await call(file.base, 'DELETE', `${k.collection(ns)}?labelSelector=${encodeURIComponent(`run=${run},keep=no`)}`);
    if (k.kind === 'Namespace') {
      // Kubernetes serves no deletecollection for namespaces.
      expect(del.status, del.text).toBe(405);
      expect((await call(file.base, 'GET', `${k.collection(ns)}?labelSelector=${encodeURIComponent(`run=${run}`)}`)).body.items).toHaveLength(3);
      return;
    }
    expect(del.status, del.text).toBe(200);
    expect(del.body).toMatchObject({ kind: 'Status', status: 'Success' });
    const left = await call(file.base, 'GET', `${k.collection(ns)}?labelSelector=${encodeURIComponent(`run=${run}`)}`);
    expect(left.body.items.map((o: any) => o.metadata.name)).toEqual([names[2]]);
  });
});

describe('namespaced lists', () => {
  it('lists one namespace or all namespaces', async () => {
    const nsA = unique('ns');
    const nsB = unique('ns');
    for (const ns of [nsA, nsB]) expect((await call(file.base, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
    const ev = KINDS.find((k) => k.kind === 'Event')!;
    const a = unique('ev');
    const b = unique('ev');
    expect((await call(file.base, 'POST', ev.collection(nsA), ev.make(a))).status).toBe(201);
    expect((await call(file.base, 'POST', ev.collection(nsB), ev.make(b))).status).toBe(201);

    const inA = await call(file.base, 'GET', ev.collection(nsA));
    expect(inA.body.items.map((o: any) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual([`${nsA}/${a}`]);
    const all = await call(file.base, 'GET', ev.collection());
    const seen = all.body.items.map((o: any) => `${o.metadata.namespace}/${o.metadata.name}`);
    expect(seen).toEqual(expect.arrayContaining([`${nsA}/${a}`, `${nsB}/${b}`]));
    expect(all.body.kind).toBe('EventList');
  });

  it('creates an Event by PUT to a name that does not exist (201), as Kubernetes allows for Events only', async () => {
    const ev = KINDS.find((k) => k.kind === 'Event')!;
    const name = unique('putev');
    const dry = await call(file.base, 'PUT', ev.item(name) + '?dryRun=All', ev.make(name));
    expect(dry.status, dry.text).toBe(201);
    expect((await call(file.base, 'GET', ev.item(name))).status).toBe(404);
    const r = await call(file.base, 'PUT', ev.item(name), ev.make(name));
    expect(r.status, r.text).toBe(201);
    expect(r.body.metadata).toMatchObject({ name, namespace: 'default', generation: 1 });
    expect((await call(file.base, 'GET', ev.item(name))).body).toEqual(r.body);
    const again = await call(file.base, 'PUT', ev.item(name), r.body);
    expect(again.status).toBe(200);
  });

  it('refuses writes to the all-namespaces path (405)', async () => {
    const ev = KINDS.find((k) => k.kind === 'Event')!;
    const r = await call(file.base, 'POST', ev.collection(), ev.make(unique('ev')));
    expect(r.status).toBe(405);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
  });
});
