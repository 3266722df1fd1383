/**
 * Watches over WebSockets (`ws` client): the same paths with Upgrade, one event per text message,
 * the subprotocol handshake as Kubernetes' (x/net websocket) does it, and refusals as HTTP answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, createEvent, createNamespace, currentVersion, deleteEvent, labelEvent } from './objects.js';
import { WsWatch, refusedUpgrade } from './stream.js';

let srv: TestServer;
let ws: string;
const open: WsWatch[] = [];
const watch = async (path: string, opts?: Parameters<typeof WsWatch.open>[1]) => {
  const w = await WsWatch.open(ws + path, opts);
  open.push(w);
  return w;
};

beforeAll(async () => {
  srv = await startServer({ bookmarkIntervalMs: 200 });
  ws = srv.url.replace(/^http/, 'ws');
  await createNamespace(srv.url, 'ws-a');
});
afterAll(async () => {
  for (const w of open) w.abort();
  await srv?.stop();
});

describe('WebSocket watches', () => {
  it('?watch=true with Upgrade: one event per text message, replay then live', async () => {
    const before = await createEvent(srv.url, 'w-0', 'ws-a');
    const w = await watch(`${EVENTS}/namespaces/ws-a/events?watch=true&resourceVersion=${before - 1}`);
    const v1 = await createEvent(srv.url, 'w-1', 'ws-a');
    await labelEvent(srv.url, 'w-1', { x: 'y' }, 'ws-a');
    await deleteEvent(srv.url, 'w-0', 'ws-a');
    const events = await w.count(4);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED w-0', 'ADDED w-1', 'MODIFIED w-1', 'DELETED w-0']);
    expect(events[1].object.metadata.resourceVersion).toBe(String(v1));
    // Each message is exactly one event (Kubernetes' JSON framer ends it with a newline).
    for (const m of w.raw) {
      expect(m.trimEnd().split('\n')).toHaveLength(1);
      expect(Object.keys(JSON.parse(m)).sort()).toEqual(['object', 'type']);
    }
  });

  it('the deprecated /watch/ path and a single object by name', async () => {
    const rv = await currentVersion(srv.url);
    const w = await watch(`${EVENTS}/watch/namespaces/ws-a/events/only?resourceVersion=${rv}`);
    await createEvent(srv.url, 'not-this', 'ws-a');
    await createEvent(srv.url, 'only', 'ws-a');
    const [e] = await w.count(1);
    expect(e.object.metadata.name).toBe('only');
  });

  it('bookmarks and timeoutSeconds work the same: the socket closes normally at the timeout', async () => {
    const rv = await currentVersion(srv.url);
    const w = await watch(`/api/v1/namespaces?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`);
    await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 'a bookmark');
    await w.ended();
    expect(w.closeCode).toBe(1000);
    expect(w.events.some((e) => e.type === 'ERROR')).toBe(false);
  });

  it('a version past the compaction horizon is an ERROR event with 410 Expired on the open socket', async () => {
    await createEvent(srv.url, 'c-1', 'ws-a');
    const head = await createEvent(srv.url, 'c-2', 'ws-a');
    await srv.store.compact(head);
    const w = await watch(`${EVENTS}/events?watch=true&resourceVersion=${head - 2}`);
    const [e] = await w.count(1);
    expect(e).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    await w.ended();
  });
});

describe('WebSocket handshake', () => {
  const path = () => `${EVENTS}/events?watch=true`;

  it('no subprotocol offered: none answered, and the watch streams', async () => {
    const w = await watch(path());
    expect(w.ws.protocol).toBe('');
  });

  it('one subprotocol offered is answered with that protocol (Kubernetes echoes it, JSON either way)', async () => {
    for (const p of ['base64.binary.k8s.io', 'binary.k8s.io', 'anything']) {
      const w = await watch(path(), { protocols: [p] });
      expect(w.ws.protocol).toBe(p);
      await createEvent(srv.url, `p-${p.replace(/\./g, '-')}`, 'ws-a');
      await w.until((e) => e.some((x) => x.object?.metadata?.name === `p-${p.replace(/\./g, '-')}`), 'its event');
    }
  });

  it('more than one subprotocol is refused with 400, as x/net websocket refuses it', async () => {
    const r = await refusedUpgrade(ws + path(), { protocols: ['base64.binary.k8s.io', 'binary.k8s.io'] });
    expect(r.status).toBe(400);
  });

  it('a bearer-token protocol is not counted nor echoed', async () => {
    const w = await watch(path(), { protocols: ['base64url.bearer.authorization.k8s.io.dG9rZW4', 'base64.binary.k8s.io'] });
    expect(w.ws.protocol).toBe('base64.binary.k8s.io');
  });

  it('an Origin that does not parse is refused with 403; a browser Origin is accepted', async () => {
    const bad = await refusedUpgrade(ws + path(), { headers: { Origin: 'null' } });
    expect(bad.status).toBe(403);
    const w = await watch(path(), { origin: 'http://localhost:3000' });
    expect(w.ws.readyState).toBe(w.ws.OPEN);
  });

  it('invalid watch options are an HTTP error with a Status instead of the upgrade', async () => {
    const r = await refusedUpgrade(ws + `${EVENTS}/events?watch=true&sendInitialEvents=true`);
    expect(r.status).toBe(422);
    expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    const sel = await refusedUpgrade(ws + `${EVENTS}/events?watch=true&labelSelector=${encodeURIComponent('a in (')}`);
    expect(sel.status).toBe(400);
    const notWatch = await refusedUpgrade(ws + `${EVENTS}/events`);
    expect(notWatch.status).toBe(400);
    const unknown = await refusedUpgrade(ws + `/apis/events.orch.io/v1/nothings?watch=true`);
    expect(unknown.status).toBe(404);
  });
});
