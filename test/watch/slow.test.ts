/**
 * Slow readers: a watcher that stops reading is dropped with an ERROR once it has more than the
 * bound queued, without slowing the others or keeping its connection; a streaming list to a slow
 * reader is written at the reader's pace instead of being queued whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, createNamespace, currentVersion, event } from './objects.js';
import { HttpWatch, WsWatch } from './stream.js';

const LIMITS = { maxBuffered: 256 * 1024, highWater: 32 * 1024, graceMs: 1500 };
let srv: TestServer;
let base: string;
const open: (HttpWatch | WsWatch)[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  srv = await startServer();
  base = srv.url;
  srv.api.context.watchLimits = LIMITS;
  for (const ns of ['slow', 'big', 'slow-ws']) await createNamespace(base, ns);
});
afterAll(async () => {
  for (const w of open) w.abort();
  await srv?.stop();
});

const watches = () => srv.api.context.watches.size;
const connections = () => new Promise<number>((resolve, reject) => srv.api.http.getConnections((err, n) => (err ? reject(err) : resolve(n))));

/** An Event carrying `kb` kilobytes in an annotation, so a few writes fill a socket. */
async function createBig(ns: string, name: string, kb: number): Promise<number> {
  const body = event(name, ns);
  body.metadata.annotations = { 'test.orch.io/padding': 'x'.repeat(kb * 1024) };
  const r = await call(base, 'POST', `${EVENTS}/namespaces/${ns}/events`, body);
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text.slice(0, 200)}`);
  return Number(r.body.metadata.resourceVersion);
}

/** Writes big objects until cond holds (bounded in count and time); returns the versions written. */
async function writeUntil(ns: string, prefix: string, cond: () => boolean, max = 400): Promise<number[]> {
  const versions: number[] = [];
  const deadline = Date.now() + 30_000;
  for (let i = 0; i < max && !cond() && Date.now() < deadline; i++) versions.push(await createBig(ns, `${prefix}-${i}`, 64));
  return versions;
}

describe('a watcher that stops reading', () => {
  it('is dropped with an ERROR past the bound; the others get every event; the dropped one resumes from its last version', async () => {
    const from = await currentVersion(base);
    const path = `${EVENTS}/namespaces/slow/events?watch=true&resourceVersion=${from}`;
    const before = watches();
    // Long enough a grace period that the connection is still there when the test reads again.
    srv.api.context.watchLimits = { ...LIMITS, graceMs: 60_000 };
    const stalled = await HttpWatch.open(base, path);
    open.push(stalled);
    stalled.pause();
    const healthy = await HttpWatch.open(base, path);
    open.push(healthy);
    expect(watches()).toBe(before + 2);

    // Keep writing until the server gives up on the stalled watcher.
    const versions = await writeUntil('slow', 'a', () => watches() < before + 2);
    srv.api.context.watchLimits = LIMITS;
    expect(watches()).toBe(before + 1);
    // Past the kernel's socket buffers, the bound is what dropped it: far fewer bytes than the 400 writes.
    expect(versions.length).toBeLessThan(400);

    // The healthy watcher was not held back: it has every event, in order.
    const all = await healthy.count(versions.length);
    expect(all.map((e) => Number(e.object.metadata.resourceVersion))).toEqual(versions);

    // The stalled one, when it reads again, finds a prefix of the events, then the ERROR, then the end.
    stalled.resume();
    await stalled.ended();
    const last = stalled.events.at(-1)!;
    expect(last).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError' } });
    const got = stalled.events.slice(0, -1).map((e) => Number(e.object.metadata.resourceVersion));
    expect(got).toEqual(versions.slice(0, got.length));

    // Resuming from the last version it received gives exactly the rest, and what came after.
    const after = [await createBig('slow', 'a-after-1', 1), await createBig('slow', 'a-after-2', 1)];
    const resumed = await HttpWatch.open(base, `${EVENTS}/namespaces/slow/events?watch=true&resourceVersion=${got.at(-1) ?? from}`);
    open.push(resumed);
    const want = [...versions.slice(got.length), ...after];
    const rest = await resumed.count(want.length);
    expect(rest.map((e) => Number(e.object.metadata.resourceVersion))).toEqual(want);
  });

  it('that never reads again has its connection cut after the grace period, so nothing it queued stays in memory', async () => {
    const from = await currentVersion(base);
    const before = watches();
    const conns = await connections();
    const stalled = await HttpWatch.open(base, `${EVENTS}/namespaces/slow/events?watch=true&resourceVersion=${from}`);
    open.push(stalled);
    stalled.pause();
    expect(await connections()).toBe(conns + 1);
    await writeUntil('slow', 'b', () => watches() === before);
    expect(watches()).toBe(before);
    const deadline = Date.now() + LIMITS.graceMs + 5000;
    while ((await connections()) > conns && Date.now() < deadline) await sleep(100);
    expect(await connections()).toBe(conns);
  });

  it('over a WebSocket: dropped the same way, with an ERROR message before the close', async () => {
    const from = await currentVersion(base);
    const before = watches();
    srv.api.context.watchLimits = { ...LIMITS, graceMs: 60_000 };
    const stalled = await WsWatch.open(base.replace(/^http/, 'ws') + `${EVENTS}/namespaces/slow-ws/events?watch=true&resourceVersion=${from}`);
    open.push(stalled);
    const socket = (stalled.ws as any)._socket as import('node:net').Socket;
    socket.pause();
    const versions = await writeUntil('slow-ws', 'c', () => watches() === before);
    srv.api.context.watchLimits = LIMITS;
    expect(watches()).toBe(before);
    socket.resume();
    await stalled.ended();
    const last = stalled.events.at(-1)!;
    expect(last).toMatchObject({ type: 'ERROR', object: { code: 500 } });
    const got = stalled.events.slice(0, -1).map((e) => Number(e.object.metadata.resourceVersion));
    expect(got).toEqual(versions.slice(0, got.length));
  });
});

describe('a streaming list to a slow reader', () => {
  it('is written at the pace the reader reads (never more than the bound queued), so it is not dropped and arrives whole', async () => {
    // Several times the bound of state: written at once, it would exceed the bound and be dropped.
    const names: string[] = [];
    const batch = 16;
    for (let i = 0; i < 240; i += batch) {
      await Promise.all(
        Array.from({ length: batch }, (_, j) => {
          const name = `s-${String(i + j).padStart(4, '0')}`;
          names.push(name);
          return createBig('big', name, 24);
        }),
      );
    }
    names.sort();
    const at = await currentVersion(base);
    const before = watches();
    const w = await HttpWatch.open(base, `${EVENTS}/namespaces/big/events?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    open.push(w);
    w.pause();
    // While it does not read, the server waits instead of queueing the rest.
    await sleep(1000);
    expect(watches()).toBe(before + 1);
    // A change made meanwhile comes after the initial state (read back from the log, not queued).
    const change = await createBig('big', 'z-during', 1);
    w.resume();
    const events = await w.count(names.length + 2, 30_000);
    expect(events.slice(0, names.length).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(names.map((n) => `ADDED ${n}`));
    expect(events[names.length]).toMatchObject({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(at), annotations: { 'orch.io/initial-events-end': 'true' } } } });
    expect(events[names.length + 1]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'z-during', resourceVersion: String(change) } } });
    expect(events.some((e) => e.type === 'ERROR')).toBe(false);
  });
});
