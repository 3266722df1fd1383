import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authorizer } from '../../src/api/authorization.js';
import { buildRegistry } from '../../src/registry/build.js';
import { createApiServer, listenOn, type ApiServer } from '../../src/http/server.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { silentLogger } from '../../src/observability/logger.js';
import { Metrics } from '../../src/observability/metrics.js';
import { kinds } from '../../src/resources/kinds.js';
import { Store } from '../../src/store/store.js';
import { call } from '../helpers/server.js';
import { EVENTS, createEvent, createNamespace, labelEvent } from '../watch/objects.js';
import { tempStore } from '../helpers/temp-store.js';
import { jsonLines } from '../helpers/json-lines.js';

/*
 * /debug/log on a real server over a real LevelDB: the log's entries with their commit times and
 * types, one object's versions, the version at a time, and the head; each read authorized as a list
 * of the resources it returns (here: events are listed only by "events-reader", and "outsider" may not
 * even get one).
 */

let log: LevelDbLog;
let store: Store;
let api: ApiServer;
let base: string;
const rv: Record<string, number> = {};

/** events-only lists events too, and may not read the gadgets of a CRD deleted since. */
const readsEvents = (user: string): boolean => user === 'events-reader' || user === 'events-only';
const authorizer: Authorizer = {
  authorize: (a) => {
    if (a.resource === 'gadgets') return a.user.username === 'events-only' ? { decision: 'noOpinion', reason: 'no gadgets for events-only' } : { decision: 'allow' };
    return a.resource !== 'events' || readsEvents(a.user.username) || (a.verb === 'get' ? a.user.username !== 'outsider' : !['list', 'watch'].includes(a.verb))
      ? { decision: 'allow' }
      : { decision: 'noOpinion', reason: 'only events-reader lists events' };
  },
};

beforeAll(async () => {
  ({ log, store } = await tempStore('orchd-debug-log-'));
  api = createApiServer({
    objects: buildRegistry(store, kinds, { logger: silentLogger, secret: randomBytes(32), authorizer }),
    kinds,
    metrics: new Metrics(),
    logger: silentLogger,
    authorizer,
    authenticator: { authenticate: async (headers) => ({ ok: true, user: { username: String(headers['x-user'] ?? 'someone'), uid: '', groups: ['system:authenticated'], extra: {} } }) },
  });
  await listenOn(api, 0, '127.0.0.1');
  await api.start();
  base = `http://127.0.0.1:${(api.http.address() as AddressInfo).port}`;
  rv.ns = await createNamespace(base, 'dl');
  rv.e1 = await createEvent(base, 'e1', 'dl');
  rv.label = await labelEvent(base, 'e1', { step: '2' }, 'dl');
  expect((await call(base, 'DELETE', `${EVENTS}/namespaces/dl/events/e1`)).status).toBe(200);
  rv.del = store.appliedSeq;
  // An object of a kind this server does not serve (now): a deleted CustomResourceDefinition's, its entry still in the log.
  rv.gadget = (await store.put(GADGET, { apiVersion: 'old.example.com/v1', kind: 'Gadget', metadata: { name: 'g1', namespace: 'dl' } }, 'absent')).seq;
});

const GADGET = 'old.example.com/gadgets/dl/g1';

afterAll(async () => {
  await api?.close();
  await store?.close();
  await log?.close();
});

describe('/debug/log', () => {
  it('serves the entries with their commit times and their types as a watch reports them', async () => {
    const r = await call(base, 'GET', `/debug/log?from=${rv.ns}`, undefined, { 'x-user': 'events-reader' });
    expect(r.status).toBe(200);
    const got = jsonLines(r.text);
    expect(got.map((l) => `${l.rv} ${l.type} ${l.key}`)).toEqual([
      `${rv.ns} ADDED /namespaces//dl`,
      `${rv.e1} ADDED events.orch.io/events/dl/e1`,
      `${rv.label} MODIFIED events.orch.io/events/dl/e1`,
      `${rv.del} DELETED events.orch.io/events/dl/e1`,
      `${rv.gadget} ADDED ${GADGET}`,
    ]);
    for (const l of got) expect(l.time).toBe((await log.get(l.rv))!.time);
    expect(got[2].object.metadata.labels).toEqual({ step: '2' });
  });

  it('sends only the entries of the event types and the name asked for', async () => {
    const reader = { 'x-user': 'events-reader' };
    const sent = async (query: string) => jsonLines((await call(base, 'GET', `/debug/log?from=${rv.ns}&${query}`, undefined, reader)).text).map((l) => `${l.rv} ${l.type} ${l.key}`);
    expect(await sent('type=DELETED')).toEqual([`${rv.del} DELETED events.orch.io/events/dl/e1`]);
    expect(await sent('type=added,deleted')).toEqual([
      `${rv.ns} ADDED /namespaces//dl`,
      `${rv.e1} ADDED events.orch.io/events/dl/e1`,
      `${rv.del} DELETED events.orch.io/events/dl/e1`,
      `${rv.gadget} ADDED ${GADGET}`,
    ]);
    expect(await sent('type=MODIFIED&type=DELETED&name=e1&namespace=dl')).toEqual([`${rv.label} MODIFIED events.orch.io/events/dl/e1`, `${rv.del} DELETED events.orch.io/events/dl/e1`]);
    // A cluster-scoped object by its name; a name no object has: nothing.
    expect(await sent('name=dl')).toEqual([`${rv.ns} ADDED /namespaces//dl`]);
    expect(await sent('name=e')).toEqual([]);
    expect((await call(base, 'GET', '/debug/log?type=GONE', undefined, reader)).body).toMatchObject({
      reason: 'BadRequest',
      code: 400,
      message: 'type: "GONE" is not one of ADDED, MODIFIED, DELETED',
    });
  });

  it('is authorized as a list of each resource it reads: all of them, or the ones asked for', async () => {
    const refused = await call(base, 'GET', `/debug/log?from=${rv.ns}`);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(refused.body.message).toContain('events');
    const namespaces = await call(base, 'GET', `/debug/log?from=${rv.ns}&collection=/namespaces`);
    expect(namespaces.status).toBe(200);
    expect(jsonLines(namespaces.text).map((l) => l.key)).toEqual(['/namespaces//dl']);
    expect((await call(base, 'GET', `/debug/log/versions?key=${encodeURIComponent('events.orch.io/events/dl/e1')}`, undefined, { 'x-user': 'outsider' })).status).toBe(403);
    // The head and the version at a time tell of the whole log: authorized as its entries are.
    for (const path of ['/debug/log/head', '/debug/log/at?time=1']) {
      const denied = await call(base, 'GET', path, undefined, { 'x-user': 'outsider' });
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
      expect(denied.body.message).toContain('events');
      expect((await call(base, 'GET', `${path}${path.includes('?') ? '&' : '?'}collection=/namespaces`, undefined, { 'x-user': 'outsider' })).status).toBe(200);
    }
  });

  it('/debug/log/state: the objects at a version as key and JSON lines, authorized as the entries are', async () => {
    const refused = await call(base, 'GET', `/debug/log/state?at=${rv.label}`, undefined, { 'x-user': 'outsider' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(refused.body.message).toContain('events');
    expect((await call(base, 'GET', `/debug/log/state?at=${rv.label}&collection=${encodeURIComponent('events.orch.io/events')}`, undefined, { 'x-user': 'outsider' })).status).toBe(403);
    const state = (q: string, user = 'events-reader') => call(base, 'GET', `/debug/log/state?${q}`, undefined, { 'x-user': user });
    const keyed = (text: string) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf('\t')), JSON.parse(l.slice(l.indexOf('\t') + 1))]);
    const at = keyed((await state(`at=${rv.label}&collection=${encodeURIComponent('events.orch.io/events')}&namespace=dl`)).text);
    expect(at.map(([k, o]) => `${k} ${o.metadata.resourceVersion} ${o.metadata.labels?.step}`)).toEqual([`events.orch.io/events/dl/e1 ${rv.label} 2`]);
    // ?managedFields=false leaves them out in the transcoder, and nothing else (the commands hide them by default).
    const one = `at=${rv.label}&collection=${encodeURIComponent('events.orch.io/events')}&namespace=dl`;
    const [[, whole]] = keyed((await state(one)).text);
    const [[, lean]] = keyed((await state(`${one}&managedFields=false`)).text);
    expect(whole.metadata.managedFields).toBeDefined();
    const { managedFields: _hidden, ...metadata } = whole.metadata;
    expect(lean).toEqual({ ...whole, metadata });
    expect(keyed((await state(`at=${rv.del}&collection=${encodeURIComponent('events.orch.io/events')}`)).text)).toEqual([]);
    // Every kind the user may list: the namespace, not the gadget of a kind served no more they may not list.
    expect(keyed((await state(`at=${rv.gadget}`, 'events-only')).text).map(([k]) => k)).toEqual(['/namespaces//dl']);
    expect(keyed((await state(`at=${rv.gadget}`)).text).map(([k]) => k)).toEqual(['/namespaces//dl', GADGET]);
    expect((await state('at=x')).body).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'at: must be a whole number, not "x"' });
    expect((await state(`at=${rv.gadget + 10}`)).body).toMatchObject({ kind: 'Status', code: 504, message: `Timeout: Too large resource version: ${rv.gadget + 10}, current: ${rv.gadget}` });
  });

  it('one object at a time, the version at a time, the head; bad requests answered with a Status', async () => {
    const versions = await call(base, 'GET', `/debug/log/versions?key=${encodeURIComponent('events.orch.io/events/dl/e1')}`, undefined, { 'x-user': 'events-reader' });
    expect(jsonLines(versions.text).map((l) => `${l.rv} ${l.type}`)).toEqual([`${rv.e1} ADDED`, `${rv.label} MODIFIED`, `${rv.del} DELETED`]);
    const labelTime = (await log.get(rv.label))!.time!;
    const reader = { 'x-user': 'events-reader' };
    expect((await call(base, 'GET', `/debug/log/at?time=${labelTime}`, undefined, reader)).body).toEqual({ rv: Math.max(rv.label, ...(await sameTime(labelTime))) });
    expect((await call(base, 'GET', '/debug/log/head', undefined, reader)).body).toEqual({ oldest: 0, head: rv.gadget, headTime: (await log.get(rv.gadget))!.time, timesFromLog: true });
    expect((await call(base, 'GET', '/debug/log?from=x', undefined, reader)).body).toMatchObject({ reason: 'BadRequest', message: 'from: must be a whole number, not "x"' });
    expect((await call(base, 'GET', '/debug/log?collection=pods', undefined, reader)).body).toMatchObject({ reason: 'BadRequest', message: 'collection: "pods" names no resource of this server' });
    expect((await call(base, 'GET', '/debug/log/nope')).status).toBe(404);
  });
});

describe('/debug/log of a kind no longer served (a deleted CRD’s)', () => {
  const reader = { 'x-user': 'events-reader' };
  const only = { 'x-user': 'events-only' };

  it('serves its entries to whoever may list it by its group and resource, and leaves them out for others', async () => {
    const all = jsonLines((await call(base, 'GET', `/debug/log?from=${rv.gadget}`, undefined, only)).text);
    expect(all).toEqual([]);
    const asked = await call(base, 'GET', `/debug/log?collection=${encodeURIComponent('old.example.com/gadgets')}`, undefined, reader);
    expect(jsonLines(asked.text).map((l) => `${l.rv} ${l.key}`)).toEqual([`${rv.gadget} ${GADGET}`]);
    expect((await call(base, 'GET', `/debug/log?collection=${encodeURIComponent('old.example.com/gadgets')}`, undefined, only)).status).toBe(403);
    const versions = await call(base, 'GET', `/debug/log/versions?key=${encodeURIComponent(GADGET)}`, undefined, reader);
    expect(jsonLines(versions.text).map((l) => `${l.rv} ${l.type}`)).toEqual([`${rv.gadget} ADDED`]);
    expect((await call(base, 'GET', `/debug/log/versions?key=${encodeURIComponent(GADGET)}`, undefined, only)).status).toBe(403);
  });

  it('a built-in group’s name that no kind has is still a mistake', async () => {
    expect((await call(base, 'GET', `/debug/log?collection=${encodeURIComponent('events.orch.io/nope')}`, undefined, reader)).body).toMatchObject({ reason: 'BadRequest', code: 400 });
    expect((await call(base, 'GET', `/debug/log/versions?key=${encodeURIComponent('/pods/dl/p')}`, undefined, reader)).status).toBe(400);
  });
});

/** The versions committed in the same batch as one at time t (they share its time). */
async function sameTime(t: number): Promise<number[]> {
  const out: number[] = [];
  for (let s = 1; s <= store.appliedSeq; s++) if ((await log.get(s))?.time === t) out.push(s);
  return out;
}
