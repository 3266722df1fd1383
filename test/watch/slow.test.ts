/**
 * Slow readers: a watcher that stops reading gets no more live bytes once it has more than the bound
 * queued (the log is its buffer: it catches up when it reads again), without slowing the others;
 * one that stays stalled past the stall timeout is ended with an ERROR carrying its last version,
 * and its connection is cut; a streaming list to a slow reader is written at the reader's pace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, createNamespace, currentVersion, event } from './objects.js';
import { HttpWatch, WsWatch } from './stream.js';
import { sleep, eventually } from '../helpers/poll.js';

const LIMITS = { maxBuffered: 256 * 1024, highWater: 32 * 1024, graceMs: 1500, stallTimeoutMs: 1500 };
let srv: TestServer;
let base: string;
const open: (HttpWatch | WsWatch)[] = [];

beforeAll(async () => {
  srv = await startServer();
  base = srv.url;
  srv.api.context.watchLimits = LIMITS;
  srv.api.http.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  for (const ns of ['slow', 'big', 'slow-ws']) await createNamespace(base, ns);
});
afterAll(async () => {
  for (const w of open) w.abort();
  await srv?.stop();
});

const watches = () => srv.api.context.watches.size;
/** Bytes the server has queued for its watch connections (HTTP responses' sockets). */
function stalledBytes(): number {
  let n = 0;
  for (const s of sockets) n += s.writableLength;
  return n;
}
const sockets = new Set<import('node:net').Socket>();
const connections = () => new Promise<number>((resolve, reject) => srv.api.http.getConnections((err, n) => (err ? reject(err) : resolve(n))));

/** An Event carrying `kb` kilobytes in an annotation, so a few writes fill a socket. */
async function createBig(ns: string, name: string, kb: number): Promise<number> {
  const body = event(name, ns);
  body.metadata.annotations = { 'test.orch.io/padding': 'x'.repeat(kb * 1024) };
  const r = await call(base, 'POST', `${EVENTS}/namespaces/${ns}/events`, body);
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text.slice(0, 200)}`);
  return Number(r.body.metadata.resourceVersion);
}

/**
 * Writes big objects until cond holds (bounded in count and time); returns the versions written. The
 * stall tests allow 2,000 (125 MiB): before a watcher is behind, the kernel may take tens of MiB for
 * a reader that does not read (tcp_rmem's maximum is 32 MiB on this machine), and 400 writes of
 * 64 KiB fitted in it on an idle machine, so the watcher was never ended.
 */
async function writeUntil(ns: string, prefix: string, cond: () => boolean, max = 400): Promise<number[]> {
  const versions: number[] = [];
  const deadline = Date.now() + 30_000;
  for (let i = 0; i < max && !cond() && Date.now() < deadline; i++) versions.push(await createBig(ns, `${prefix}-${i}`, 64));
  return versions;
}

describe('a watcher that stops reading', () => {
  it('stops getting live bytes past the bound, without holding the others back; reading again, it catches up from the log and misses nothing', async () => {
    const from = await currentVersion(base);
    const path = `${EVENTS}/namespaces/slow/events?watch=true&resourceVersion=${from}`;
    const before = watches();
    srv.api.context.watchLimits = { ...LIMITS, stallTimeoutMs: 60_000 };
    const stalled = await HttpWatch.open(base, path);
    open.push(stalled);
    stalled.pause();
    const healthy = await HttpWatch.open(base, path);
    open.push(healthy);
    // Far more than the bound and the kernel's socket buffers hold: 150 events of 64 KiB.
    const versions = await writeUntil('slow', 'a', () => false, 150);
    const all = await healthy.count(versions.length);
    expect(all.map((e) => Number(e.object.metadata.resourceVersion))).toEqual(versions);
    expect(watches()).toBe(before + 2);
    // What the server holds for the stalled one is its bound and a batch, not the 9 MiB written since.
    const held = stalledBytes();
    expect(held).toBeLessThan(LIMITS.maxBuffered + 2 * 65 * 1024);

    stalled.resume();
    const after = await createBig('slow', 'a-after', 1);
    const got = await stalled.count(versions.length + 1, 30_000);
    expect(got.map((e) => Number(e.object.metadata.resourceVersion))).toEqual([...versions, after]);
    expect(got.some((e) => e.type === 'ERROR')).toBe(false);
    srv.api.context.watchLimits = LIMITS;
  });

  it('that never reads again is ended after the stall timeout with an ERROR carrying its last version, and its connection is cut after the grace period', async () => {
    const from = await currentVersion(base);
    const before = watches();
    const conns = await connections();
    srv.api.context.watchLimits = { ...LIMITS, graceMs: 60_000 };
    const stalled = await HttpWatch.open(base, `${EVENTS}/namespaces/slow/events?watch=true&resourceVersion=${from}`);
    open.push(stalled);
    stalled.pause();
    expect(await connections()).toBe(conns + 1);
    const versions = await writeUntil('slow', 'b', () => watches() === before, 2000);
    srv.api.context.watchLimits = LIMITS;
    expect(watches()).toBe(before);
    // When it reads again: a prefix of the events, then an ERROR with the version to resume from.
    stalled.resume();
    await stalled.ended();
    const last = stalled.events.at(-1)!;
    expect(last).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError' } });
    const got = stalled.events.slice(0, -1).map((e) => Number(e.object.metadata.resourceVersion));
    expect(got).toEqual(versions.slice(0, got.length));
    expect(last.object.metadata.resourceVersion).toBe(String(got.at(-1)));

    // One that does not read the ERROR either has its connection cut after the grace period.
    const conns2 = await connections();
    const cut = await HttpWatch.open(base, `${EVENTS}/namespaces/slow/events?watch=true&resourceVersion=${await currentVersion(base)}`);
    open.push(cut);
    cut.pause();
    await writeUntil('slow', 'c', () => watches() === before, 2000);
    await eventually(async () => (await connections()) <= conns2, { timeoutMs: LIMITS.graceMs + 5000, stepMs: 100, what: 'the cut watch closed' });
    expect(await connections()).toBe(conns2);
  });

  it('over a WebSocket: ended the same way, with an ERROR message before the close', async () => {
    const from = await currentVersion(base);
    const before = watches();
    srv.api.context.watchLimits = { ...LIMITS, graceMs: 60_000 };
    const stalled = await WsWatch.open(base.replace(/^http/, 'ws') + `${EVENTS}/namespaces/slow-ws/events?watch=true&resourceVersion=${from}`);
    open.push(stalled);
    const socket = (stalled.ws as any)._socket as import('node:net').Socket;
    socket.pause();
    const versions = await writeUntil('slow-ws', 'c', () => watches() === before, 2000);
    srv.api.context.watchLimits = LIMITS;
    expect(watches()).toBe(before);
    socket.resume();
    await stalled.ended();
    const last = stalled.events.at(-1)!;
    expect(last).toMatchObject({ type: 'ERROR', object: { code: 500 } });
    const got = stalled.events.slice(0, -1).map((e) => Number(e.object.metadata.resourceVersion));
    expect(got).toEqual(versions.slice(0, got.length));
    expect(last.object.metadata.resourceVersion).toBe(String(got.at(-1)));
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
