/**
 * Watch endpoints over HTTP: every list path with ?watch=true, the deprecated /watch/ paths, one
 * object through a name field selector, and the framing (chunked, one event per line, each event
 * on the wire before the next write).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, createEvent, createNamespace, currentVersion, deleteEvent } from './objects.js';
import { HttpWatch } from './stream.js';

let srv: TestServer;
let base: string;
const open: HttpWatch[] = [];
const watch = async (path: string, headers?: Record<string, string>) => {
  const w = await HttpWatch.open(base, path, headers);
  open.push(w);
  return w;
};

beforeAll(async () => {
  srv = await startServer();
  base = srv.url;
  await createNamespace(base, 'team-a');
  await createNamespace(base, 'team-b');
});
afterAll(async () => {
  for (const w of open) w.abort();
  await srv?.stop();
});

describe('watch paths', () => {
  it('?watch=true on one namespace sees that namespace only, with the object and its version', async () => {
    const rv = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/team-a/events?watch=true&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    const other = await createEvent(base, 'b-1', 'team-b');
    const mine = await createEvent(base, 'a-1', 'team-a');
    const [e] = await w.count(1);
    expect(e.type).toBe('ADDED');
    expect(e.object).toMatchObject({ kind: 'Event', apiVersion: 'events.orch.io/v1', metadata: { name: 'a-1', namespace: 'team-a', resourceVersion: String(mine) } });
    expect(other).toBeLessThan(mine);
    await deleteEvent(base, 'a-1', 'team-a');
    const events = await w.count(2);
    expect(events.map((x) => x.type)).toEqual(['ADDED', 'DELETED']);
    expect(Number(events[1].object.metadata.resourceVersion)).toBeGreaterThan(mine);
  });

  it('?watch=true on the all-namespaces path sees every namespace', async () => {
    const rv = await currentVersion(base);
    const w = await watch(`${EVENTS}/events?watch=true&resourceVersion=${rv}`);
    await createEvent(base, 'all-1', 'team-a');
    await createEvent(base, 'all-2', 'team-b');
    const events = await w.count(2);
    expect(events.map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual(['team-a/all-1', 'team-b/all-2']);
  });

  it('?watch=true on a cluster-scoped kind (core v1 namespaces)', async () => {
    const rv = await currentVersion(base);
    const w = await watch(`/api/v1/namespaces?watch=1&resourceVersion=${rv}`);
    await createNamespace(base, 'team-c');
    const [e] = await w.count(1);
    expect(e).toMatchObject({ type: 'ADDED', object: { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'team-c' } } });
  });

  it('the deprecated /watch/ paths: collection, namespaced collection, and one object by name', async () => {
    const rv = await currentVersion(base);
    const all = await watch(`${EVENTS}/watch/events?resourceVersion=${rv}`);
    const ns = await watch(`${EVENTS}/watch/namespaces/team-b/events?resourceVersion=${rv}`);
    const one = await watch(`${EVENTS}/watch/namespaces/team-a/events/dep-2?resourceVersion=${rv}`);
    const nsObj = await watch(`/api/v1/watch/namespaces/team-d?resourceVersion=${rv}`);
    await createEvent(base, 'dep-1', 'team-a');
    await createEvent(base, 'dep-2', 'team-a');
    await createEvent(base, 'dep-2', 'team-b');
    await createNamespace(base, 'team-e');
    await createNamespace(base, 'team-d');
    expect((await all.count(3)).map((e) => e.object.metadata.name)).toEqual(['dep-1', 'dep-2', 'dep-2']);
    const nsEvents = await ns.count(1);
    expect(nsEvents[0].object.metadata).toMatchObject({ name: 'dep-2', namespace: 'team-b' });
    const oneEvents = await one.count(1);
    expect(oneEvents[0].object.metadata).toMatchObject({ name: 'dep-2', namespace: 'team-a' });
    const nsObjEvents = await nsObj.count(1);
    expect(nsObjEvents[0].object.metadata.name).toBe('team-d');
    // Nothing else arrived on the narrow watches once the wider one saw everything.
    expect(ns.events).toHaveLength(1);
    expect(one.events).toHaveLength(1);
    expect(nsObj.events).toHaveLength(1);
  });

  it('one object through fieldSelector=metadata.name=…', async () => {
    const rv = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/team-a/events?watch=true&resourceVersion=${rv}&fieldSelector=${encodeURIComponent('metadata.name=fs-2')}`);
    await createEvent(base, 'fs-1', 'team-a');
    await createEvent(base, 'fs-2', 'team-a');
    await deleteEvent(base, 'fs-1', 'team-a');
    await deleteEvent(base, 'fs-2', 'team-a');
    const events = await w.count(2);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED fs-2', 'DELETED fs-2']);
  });

  it('a write method on a watch path is refused', async () => {
    const r = await call(base, 'POST', `${EVENTS}/watch/namespaces/team-a/events`, {});
    expect(r.status).toBe(405);
    expect(r.body.kind).toBe('Status');
  });
});

describe('framing', () => {
  it('is chunked JSON, one event per line, each event delivered before the next write', async () => {
    const rv = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/team-a/events?watch=true&resourceVersion=${rv}`, { Accept: '*/*' });
    expect(w.headers['transfer-encoding']).toBe('chunked');
    expect(w.headers['content-type']).toMatch(/^application\/json/);
    for (let i = 0; i < 5; i++) {
      // The next write happens only after the client has the previous event: nothing waits for a
      // buffer to fill or the stream to end.
      const v = await createEvent(base, `line-${i}`, 'team-a');
      const events = await w.count(i + 1);
      expect(events[i].object.metadata.resourceVersion).toBe(String(v));
    }
    for (const line of w.raw) {
      const parsed = JSON.parse(line);
      expect(Object.keys(parsed).sort()).toEqual(['object', 'type']);
      expect(line).not.toContain('\n');
    }
  });
});
