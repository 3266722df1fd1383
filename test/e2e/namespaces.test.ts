/**
 * Namespaces as scopes: content lives only in namespaces that exist, a namespace being deleted is
 * Terminating and takes no new content, and deleting one deletes what is in it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { Store } from '../../src/store/store.js';
import { call, serverForFile, startServer } from '../helpers/server.js';
import { eventually } from '../helpers/poll.js';
import { kindCase, unique } from './support.js';
import { tempDir } from '../helpers/temp.js';

const file = serverForFile();

const ns = kindCase('Namespace');
const event = kindCase('Event');
const names = async (namespace: string): Promise<string[]> => (await call(file.base, 'GET', event.collection(namespace))).body.items.map((o: any) => o.metadata.name);

describe('namespaces', () => {
  it('starts with default, kube-system, kube-public and kube-node-lease, Active and labelled with their name', async () => {
    const list = await call(file.base, 'GET', ns.collection());
    const byName = new Map(list.body.items.map((o: any) => [o.metadata.name, o]));
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      const o: any = byName.get(name);
      expect(o?.status?.phase, name).toBe('Active');
      expect(o?.metadata.labels?.['kubernetes.io/metadata.name'], name).toBe(name);
    }
  });

  it('refuses to delete default, kube-system and kube-public (403 Forbidden)', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const r = await call(file.base, 'DELETE', ns.item(name));
      expect(r.status, name).toBe(403);
      expect(r.body, name).toMatchObject({
        kind: 'Status',
        reason: 'Forbidden',
        code: 403,
        message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
        details: { name, kind: 'namespaces' },
      });
      expect((await call(file.base, 'GET', ns.item(name))).body.status.phase, name).toBe('Active');
    }
  });

  it('deleting a namespace deletes its content, and only its content', async () => {
    const doomed = unique('doomed');
    const other = unique('other');
    for (const n of [doomed, other]) expect((await call(file.base, 'POST', ns.collection(), ns.make(n))).status).toBe(201);
    const a = unique('ev');
    const b = unique('ev');
    for (const n of [doomed, other]) {
      expect((await call(file.base, 'POST', event.collection(n), event.make(a))).status).toBe(201);
      expect((await call(file.base, 'POST', event.collection(n), event.make(b))).status).toBe(201);
    }
    // Held by the `kubernetes` finalizer until the namespace controller has emptied it.
    expect((await call(file.base, 'DELETE', ns.item(doomed))).status).toBe(200);
    expect(await eventually(async () => (await names(doomed)).length === 0, { timeoutMs: 5000 })).toBe(true);
    await eventually(async () => (await call(file.base, 'GET', ns.item(doomed))).status === 404, { what: 'the emptied namespace gone' });
    expect((await call(file.base, 'GET', event.collection())).body.items.some((o: any) => o.metadata.namespace === doomed)).toBe(false);
    expect((await names(other)).sort()).toEqual([a, b].sort());
    // A namespace of the same name later starts empty.
    expect((await call(file.base, 'POST', ns.collection(), ns.make(doomed))).status).toBe(201);
    expect(await names(doomed)).toEqual([]);
  });

  it('a namespace held by a finalizer is Terminating, takes no new content, and is emptied', async () => {
    const held = unique('held');
    const o = ns.make(held);
    o.metadata.finalizers = ['example.com/hold'];
    expect((await call(file.base, 'POST', ns.collection(), o)).status).toBe(201);
    const ev = unique('ev');
    expect((await call(file.base, 'POST', event.collection(held), event.make(ev))).status).toBe(201);

    const del = await call(file.base, 'DELETE', ns.item(held));
    expect(del.status).toBe(200);
    expect(del.body.metadata.deletionTimestamp).toBeTruthy();
    // The phase is written with the deletion mark, as Kubernetes' namespace delete does.
    expect(del.body.status.phase).toBe('Terminating');
    expect((await call(file.base, 'GET', ns.item(held))).body.status.phase).toBe('Terminating');
    expect(await eventually(async () => (await names(held)).length === 0, { timeoutMs: 5000 })).toBe(true);

    const late = await call(file.base, 'POST', event.collection(held), event.make(unique('late')));
    expect(late.status).toBe(403);
    expect(late.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(late.body.message).toContain('because it is being terminated');

    // The namespace controller writes the namespace's conditions meanwhile: the replace may have to read again.
    await eventually(async () => {
      const cur = (await call(file.base, 'GET', ns.item(held))).body;
      return (await call(file.base, 'PUT', ns.item(held), { ...cur, metadata: { ...cur.metadata, finalizers: [] } })).status === 200;
    });
    // Its own finalizer released, the controller lets it go.
    await eventually(async () => (await call(file.base, 'GET', ns.item(held))).status === 404);
  });
});

describe('a cleanup a previous run left undone', () => {
  it('objects left in a namespace that is gone are deleted at the next start; other namespaces keep theirs', async () => {
    const dataDir = tempDir('orchd-ns-cleanup-');
    let srv = await startServer({ dataDir });
    for (const name of ['gone-ns', 'kept-ns']) {
      expect((await call(srv.url, 'POST', ns.collection(), ns.make(name))).status).toBe(201);
      const e = event.make('left');
      e.metadata.namespace = name;
      const r = await call(srv.url, 'POST', event.collection(name), e);
      expect(r.status, r.text).toBe(201);
    }
    await srv.stop();
    // The namespace goes from the log while no server runs: nothing cleaned up after it.
    const log = new LevelDbLog({ path: join(dataDir, 'log') });
    await log.open();
    const store = new Store({ log });
    await store.start();
    const key = '/namespaces//gone-ns';
    await store.remove(key, store.get(key)!.obj, 'any');
    await store.close();
    await log.close();

    srv = await startServer({ dataDir });
    try {
      const gone = await eventually(async () => (await call(srv.url, 'GET', `${event.collection('gone-ns')}/left`)).status === 404);
      expect(gone).toBe(true);
      expect((await call(srv.url, 'GET', `${event.collection('kept-ns')}/left`)).status).toBe(200);
    } finally {
      await srv.stop();
    }
  });
});
