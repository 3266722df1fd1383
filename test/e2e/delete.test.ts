/**
 * DELETE options and their effects: finalizers and deletionTimestamp, preconditions, grace periods,
 * the propagationPolicy/orphanDependents rule, and the garbage collector following ownerReferences.
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile, startServer } from '../helpers/server.js';
import { eventually, sleep } from '../helpers/poll.js';
import { kindCase, unique } from './support.js';
import { tempDir } from '../helpers/temp.js';

const file = serverForFile();

const vap = kindCase('ValidatingAdmissionPolicy');
const binding = kindCase('ValidatingAdmissionPolicyBinding');
const event = kindCase('Event');

async function create(k = vap, name = unique('obj'), edit: (o: any) => void = () => {}): Promise<any> {
  const o = k.make(name);
  edit(o);
  const r = await call(file.base, 'POST', k.collection(k.namespaced ? 'default' : undefined), o);
  expect(r.status, r.text).toBe(201);
  return r.body;
}

const exists = async (path: string): Promise<boolean> => (await call(file.base, 'GET', path)).status === 200;

describe('finalizers', () => {
  it('a delete marks the object; deleting again keeps the first deletionTimestamp; the last finalizer removed deletes it', async () => {
    const obj = await create(vap, unique('fin'), (o) => (o.metadata.finalizers = ['example.com/a', 'example.com/b']));
    const name = obj.metadata.name;
    const first = await call(file.base, 'DELETE', vap.item(name));
    expect(first.status).toBe(202);
    expect(first.body.metadata.finalizers).toEqual(['example.com/a', 'example.com/b']);
    const stamp = first.body.metadata.deletionTimestamp;
    expect(stamp).toBeTruthy();
    const again = await call(file.base, 'DELETE', vap.item(name));
    expect(again.status).toBe(202);
    expect(again.body.metadata.deletionTimestamp).toBe(stamp);

    // While being deleted, no finalizer may be added, and the deletion marks cannot be taken back.
    const cur = (await call(file.base, 'GET', vap.item(name))).body;
    const add = await call(file.base, 'PUT', vap.item(name), { ...cur, metadata: { ...cur.metadata, finalizers: [...cur.metadata.finalizers, 'example.com/c'] } });
    expect(add.status).toBe(422);
    const unmark = await call(file.base, 'PUT', vap.item(name), { ...cur, metadata: { ...cur.metadata, deletionTimestamp: undefined } });
    expect(unmark.status, unmark.text).toBe(200);
    expect(unmark.body.metadata.deletionTimestamp).toBe(stamp);

    const one = await call(file.base, 'PUT', vap.item(name), { ...unmark.body, metadata: { ...unmark.body.metadata, finalizers: ['example.com/b'] } });
    expect(one.status).toBe(200);
    expect(await exists(vap.item(name))).toBe(true);
    const none = await call(file.base, 'PUT', vap.item(name), { ...one.body, metadata: { ...one.body.metadata, finalizers: [] } });
    expect(none.status).toBe(200);
    expect(await exists(vap.item(name))).toBe(false);
  });
});

describe('delete options', () => {
  it('checks uid and resourceVersion preconditions (409 on mismatch)', async () => {
    const obj = await create();
    const name = obj.metadata.name;
    const body = (preconditions: object) => ({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions });
    const uid = await call(file.base, 'DELETE', vap.item(name), body({ uid: '00000000-0000-0000-0000-000000000000' }));
    expect(uid.status).toBe(409);
    expect(uid.body).toMatchObject({ reason: 'Conflict', details: { name } });
    expect(uid.body.message).toContain('Precondition failed: UID in precondition');
    const rv = await call(file.base, 'DELETE', vap.item(name), body({ resourceVersion: String(Number(obj.metadata.resourceVersion) - 1) }));
    expect(rv.status).toBe(409);
    expect(rv.body.message).toContain('Precondition failed: ResourceVersion in precondition');
    expect(await exists(vap.item(name))).toBe(true);
    const ok = await call(file.base, 'DELETE', vap.item(name), body({ uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion }));
    expect(ok.status, ok.text).toBe(200);
    expect(await exists(vap.item(name))).toBe(false);
  });

  it('accepts gracePeriodSeconds in the query and in the body', async () => {
    const a = await create();
    const q = await call(file.base, 'DELETE', vap.item(a.metadata.name) + '?gracePeriodSeconds=0');
    expect(q.status).toBe(200);
    const b = await create(event, unique('ev'));
    const body = await call(file.base, 'DELETE', event.item(b.metadata.name), { gracePeriodSeconds: 30 });
    expect(body.status).toBe(200);
    expect(await exists(event.item(b.metadata.name))).toBe(false);
    const junk = await call(file.base, 'DELETE', vap.item(a.metadata.name) + '?gracePeriodSeconds=soon');
    expect(junk.status).toBe(400);
  });

  it('refuses propagationPolicy together with orphanDependents (422 DeleteOptions Invalid, as Kubernetes) and unknown policies', async () => {
    const obj = await create();
    const name = obj.metadata.name;
    const both = await call(file.base, 'DELETE', vap.item(name) + '?propagationPolicy=Background&orphanDependents=false');
    expect(both.status).toBe(422);
    expect(both.body).toMatchObject({ kind: 'Status', reason: 'Invalid', details: { kind: 'DeleteOptions', group: 'meta.k8s.io' } });
    expect(both.body.details.causes.map((c: any) => c.field)).toEqual(['propagationPolicy']);
    const inBody = await call(file.base, 'DELETE', vap.item(name), { propagationPolicy: 'Orphan', orphanDependents: true });
    expect(inBody.status).toBe(422);
    const unknown = await call(file.base, 'DELETE', vap.item(name) + '?propagationPolicy=Sometimes');
    expect(unknown.status).toBe(422);
    expect(unknown.body.details.causes[0]).toMatchObject({ reason: 'FieldValueNotSupported', field: 'propagationPolicy' });
    expect(await exists(vap.item(name))).toBe(true);
  });
});

describe('garbage collection of dependents (ownerReferences)', () => {
  const ownedBy = (owner: any) => (o: any) => (o.metadata.ownerReferences = [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid }]);

  it('Background (the default): dependents go when their owner goes', async () => {
    const owner = await create();
    const dep1 = await create(binding, unique('dep'), ownedBy(owner));
    const dep2 = await create(event, unique('dep'), ownedBy(owner));
    const bystander = await create(binding);
    expect((await call(file.base, 'DELETE', vap.item(owner.metadata.name))).status).toBe(200);
    const gone = await eventually(async () => !(await exists(binding.item(dep1.metadata.name))) && !(await exists(event.item(dep2.metadata.name))));
    expect(gone).toBe(true);
    expect(await exists(binding.item(bystander.metadata.name))).toBe(true);
  });

  it('a dependent with another living owner stays, without the dangling owner counting', async () => {
    const owner1 = await create();
    const owner2 = await create();
    const dep = await create(binding, unique('dep'), (o) => {
      o.metadata.ownerReferences = [owner1, owner2].map((w) => ({ apiVersion: w.apiVersion, kind: w.kind, name: w.metadata.name, uid: w.metadata.uid }));
    });
    expect((await call(file.base, 'DELETE', vap.item(owner1.metadata.name))).status).toBe(200);
    // Give the collector a chance to (wrongly) act, then check the dependent is still there.
    await sleep(300);
    expect(await exists(binding.item(dep.metadata.name))).toBe(true);
    expect((await call(file.base, 'DELETE', vap.item(owner2.metadata.name))).status).toBe(200);
    expect(await eventually(async () => !(await exists(binding.item(dep.metadata.name))))).toBe(true);
  });

  it('an owner is the object of the referenced kind and name only while it has the referenced uid', async () => {
    const a = await create();
    const b = await create();
    const dep = await create(binding, unique('dep'), (o) => {
      o.metadata.ownerReferences = [a, b].map((w) => ({ apiVersion: w.apiVersion, kind: w.kind, name: w.metadata.name, uid: w.metadata.uid }));
    });
    expect((await call(file.base, 'DELETE', vap.item(a.metadata.name))).status).toBe(200);
    // The same name again, a new uid: not the owner the dependent names.
    const again = await create(vap, a.metadata.name);
    expect(again.metadata.uid).not.toBe(a.metadata.uid);
    expect((await call(file.base, 'DELETE', vap.item(b.metadata.name))).status).toBe(200);
    expect(await eventually(async () => !(await exists(binding.item(dep.metadata.name))))).toBe(true);
    expect(await exists(vap.item(a.metadata.name))).toBe(true);
  });

  it('dependents restored from the log after a restart still go with their owner', async () => {
    const dataDir = tempDir('orchd-gc-restart-');
    let srv = await startServer({ dataDir });
    const make = async (k: typeof vap, o: any) => {
      const r = await call(srv.url, 'POST', k.collection(k.namespaced ? 'default' : undefined), o);
      expect(r.status, r.text).toBe(201);
      return r.body;
    };
    const owned = (k: typeof vap, owner: any) => {
      const o = k.make(unique('dep'));
      ownedBy(owner)(o);
      return o;
    };
    const owner = await make(vap, vap.make(unique('owner')));
    const deps = [await make(binding, owned(binding, owner)), await make(event, owned(event, owner))];
    const bystander = await make(binding, binding.make(unique('other')));
    await srv.stop();
    srv = await startServer({ dataDir });
    try {
      expect((await call(srv.url, 'DELETE', vap.item(owner.metadata.name))).status).toBe(200);
      const gone = await eventually(
        async () => (await call(srv.url, 'GET', binding.item(deps[0].metadata.name))).status === 404 && (await call(srv.url, 'GET', event.item(deps[1].metadata.name))).status === 404,
      );
      expect(gone).toBe(true);
      expect((await call(srv.url, 'GET', binding.item(bystander.metadata.name))).status).toBe(200);
    } finally {
      await srv.stop();
    }
  });

  it('Orphan: the owner goes, dependents stay without the reference to it', async () => {
    const owner = await create();
    const dep = await create(binding, unique('dep'), ownedBy(owner));
    const del = await call(file.base, 'DELETE', vap.item(owner.metadata.name) + '?propagationPolicy=Orphan');
    expect(del.status).toBe(202);
    expect(del.body.metadata.finalizers).toEqual(['orphan']);
    expect(await eventually(async () => !(await exists(vap.item(owner.metadata.name))))).toBe(true);
    const kept = await call(file.base, 'GET', binding.item(dep.metadata.name));
    expect(kept.status).toBe(200);
    expect(kept.body.metadata.ownerReferences).toBeUndefined();
  });

  it('orphanDependents=true acts as Orphan', async () => {
    const owner = await create();
    const dep = await create(binding, unique('dep'), ownedBy(owner));
    await call(file.base, 'DELETE', vap.item(owner.metadata.name), { orphanDependents: true });
    expect(await eventually(async () => !(await exists(vap.item(owner.metadata.name))))).toBe(true);
    expect((await call(file.base, 'GET', binding.item(dep.metadata.name))).body.metadata?.ownerReferences).toBeUndefined();
  });

  it('Foreground: dependents go first, then the owner', async () => {
    const owner = await create();
    const dep = await create(binding, unique('dep'), ownedBy(owner));
    const del = await call(file.base, 'DELETE', vap.item(owner.metadata.name), { propagationPolicy: 'Foreground' });
    expect(del.status).toBe(202);
    expect(del.body.metadata.finalizers).toContain('foregroundDeletion');
    expect(await eventually(async () => !(await exists(vap.item(owner.metadata.name))))).toBe(true);
    expect(await exists(binding.item(dep.metadata.name))).toBe(false);
  });
});

describe('deletecollection with limit and continue deletes what the same list would return, never more (issue 18)', () => {
  // Kubernetes' DeleteCollection lists with the request's ListOptions and deletes what the list returns:
  // with a limit one page (from continue when given), without one every page from continue on.
  it.each([vap, event])('$kind', async (k) => {
    const ns = k.namespaced ? 'default' : undefined;
    const run = unique('page');
    const names = ['a', 'b', 'c', 'd', 'e', 'f'].map((s) => `${run}-${s}`);
    for (const name of names) await create(k, name, (o) => (o.metadata.labels = { run }));
    const selector = `labelSelector=${encodeURIComponent(`run=${run}`)}`;
    const left = async (): Promise<string[]> => (await call(file.base, 'GET', `${k.collection(ns)}?${selector}`)).body.items.map((o: any) => o.metadata.name);

    const first = await call(file.base, 'DELETE', `${k.collection(ns)}?${selector}&limit=2`);
    expect(first.status, first.text).toBe(200);
    expect(await left()).toEqual(names.slice(2));

    // A page of one, then its continue token: with limit=1 exactly the next object goes.
    const page = await call(file.base, 'GET', `${k.collection(ns)}?${selector}&limit=1`);
    expect(page.body.items.map((o: any) => o.metadata.name)).toEqual([names[2]]);
    const token = encodeURIComponent(page.body.metadata.continue);
    const one = await call(file.base, 'DELETE', `${k.collection(ns)}?${selector}&limit=1&continue=${token}`);
    expect(one.status, one.text).toBe(200);
    expect(await left()).toEqual([names[2], ...names.slice(4)]);

    // Without a limit, everything after the token (the token's snapshot: d is already gone), not what came before it.
    const rest = await call(file.base, 'DELETE', `${k.collection(ns)}?${selector}&continue=${token}`);
    expect(rest.status, rest.text).toBe(200);
    expect(await left()).toEqual([names[2]]);

    // A token that is not one, or one made for another selector: 400 and nothing deleted.
    for (const bad of ['not-a-token', token]) {
      const other = bad === token ? 'labelSelector=other%3Dx' : selector;
      const r = await call(file.base, 'DELETE', `${k.collection(ns)}?${other}&continue=${bad}`);
      expect(r.status, r.text).toBe(400);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    }
    expect(await left()).toEqual([names[2]]);
  });
});
