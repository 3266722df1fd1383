/**
 * Replay then live with no gap and no duplicate: watches start from many versions while writes
 * land concurrently; each must see exactly the log's changes after its version, in order, once.
 * The truth to compare with is the log itself, read back entry by entry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, createEvent, createNamespace, currentVersion, event, labelEvent } from './objects.js';
import { HttpWatch, WsWatch, type WatchEvent } from './stream.js';

let srv: TestServer;
let base: string;
const cleanup: (() => void)[] = [];

beforeAll(async () => {
  srv = await startServer();
  base = srv.url;
  for (const ns of ['rp', 'rp-many', 'rp-re', 'rp-obs']) await createNamespace(base, ns);
});
afterAll(async () => {
  for (const c of cleanup) c();
  await srv?.stop();
});

const store = () => srv.store;

interface Expected {
  seq: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  name: string;
}

/**
 * What a watch on namespace ns from `after` must deliver, from the log. Each test uses a namespace
 * of its own, empty at `origin`, so reading from there knows which keys exist.
 */
async function expectedAfter(ns: string, origin: number, after: number, to: number): Promise<Expected[]> {
  const exists = new Set<string>();
  const out: Expected[] = [];
  for await (const batch of store().log.read(origin + 1, to)) {
    for (const e of batch) {
      const o = e.value as any;
      const inScope = e.key.startsWith(`events.orch.io/events/${ns}/`);
      const type = e.type === 'delete' ? 'DELETED' : exists.has(e.key) ? 'MODIFIED' : 'ADDED';
      if (e.type === 'delete') exists.delete(e.key);
      else exists.add(e.key);
      if (inScope && e.seq > after) out.push({ seq: e.seq, type, name: o.metadata.name });
    }
  }
  return out;
}

const seen = (events: WatchEvent[]): Expected[] =>
  events.filter((e) => e.type !== 'BOOKMARK').map((e) => ({ seq: Number(e.object.metadata.resourceVersion), type: e.type as Expected['type'], name: e.object.metadata.name }));

/** Concurrent creates, replaces and deletes of a small set of names; reports each new version. */
async function writeLoad(ns: string, n: number, onVersion: (rv: number) => void): Promise<void> {
  const names = Array.from({ length: 24 }, (_, i) => `obj-${i}`);
  const path = (name: string) => `${EVENTS}/namespaces/${ns}/events/${name}`;
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const name = names[i % names.length];
      const got = await call(base, 'GET', path(name));
      let r;
      if (got.status === 404) r = await call(base, 'POST', `${EVENTS}/namespaces/${ns}/events`, event(name, ns));
      else if (i % 5 === 0) r = await call(base, 'DELETE', path(name));
      else r = await call(base, 'PUT', path(name), { ...got.body, metadata: { ...got.body.metadata, resourceVersion: undefined, labels: { write: String(i) } } });
      // A lost race (409/404) is a normal outcome of concurrent writers; it writes nothing.
      if (r.status < 300 && r.body?.metadata?.resourceVersion) onVersion(Number(r.body.metadata.resourceVersion));
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

describe('replay then live', () => {
  it('watches started from many versions during concurrent writes see exactly the changes after their version, in order, once', async () => {
    const start = await currentVersion(base);
    const watchers: { from: number; w: HttpWatch | WsWatch }[] = [];
    const starts: Promise<void>[] = [];
    let latest = start;
    let count = 0;
    const begin = (from: number) => {
      const useWs = watchers.length % 3 === 2;
      const path = `${EVENTS}/namespaces/rp-many/events?watch=true&resourceVersion=${from}`;
      starts.push(
        (useWs ? WsWatch.open(base.replace(/^http/, 'ws') + path) : HttpWatch.open(base, path)).then((w) => {
          cleanup.push(() => w.abort());
          watchers.push({ from, w });
        }),
      );
    };
    begin(start);
    await writeLoad('rp-many', 240, (rv) => {
      latest = Math.max(latest, rv);
      // Start a watch every few writes, from the newest version seen and from older ones (replay).
      if (++count % 10 === 0) {
        begin(latest);
        begin(Math.max(start, latest - 37));
      }
    });
    await Promise.all(starts);
    const head = await currentVersion(base);
    expect(watchers.length).toBeGreaterThanOrEqual(20);
    for (const { from, w } of watchers) {
      const want = await expectedAfter('rp-many', start, from, head);
      await w.until((e) => seen(e).length >= want.length, `${want.length} changes after ${from}`);
      expect(seen(w.events), `watch from ${from}`).toEqual(want);
    }
    // Nothing arrives beyond the log (no duplicate delivered late): the next event each watcher
    // sees is a marker written after the head.
    const marker = await createEvent(base, 'rp-marker', 'rp-many');
    for (const { from, w } of watchers) {
      const want = [...(await expectedAfter('rp-many', start, from, head)), { seq: marker, type: 'ADDED', name: 'rp-marker' }];
      await w.until((e) => seen(e).some((x) => x.name === 'rp-marker'), `the marker after ${from}`);
      expect(seen(w.events), `watch from ${from}`).toEqual(want);
    }
  });

  it('a client that reconnects with the last version it saw misses nothing and sees nothing twice', async () => {
    const from = await currentVersion(base);
    const collected: WatchEvent[] = [];
    let target = Infinity;
    let reconnects = 0;
    const lastRv = () => (collected.length ? Number(collected[collected.length - 1].object.metadata.resourceVersion) : from);
    const follower = (async () => {
      while (lastRv() < target) {
        const w = await HttpWatch.open(base, `${EVENTS}/namespaces/rp-re/events?watch=true&resourceVersion=${lastRv()}`);
        cleanup.push(() => w.abort());
        // Take a few events (or what came in a short while), then drop the connection mid-stream.
        await w.count(7, 300).catch(() => undefined);
        w.abort();
        reconnects++;
        collected.push(...w.events);
        if (reconnects > 500) throw new Error('too many reconnects');
      }
    })();
    await writeLoad('rp-re', 150, () => undefined);
    target = await currentVersion(base);
    await follower;
    const head = Number(collected[collected.length - 1].object.metadata.resourceVersion);
    expect(reconnects).toBeGreaterThan(3);
    expect(seen(collected)).toEqual(await expectedAfter('rp-re', from, from, head));
  });

  it('a version older than the compaction horizon is an ERROR event with a 410 Expired Status', async () => {
    await createEvent(base, 'old-1', 'rp');
    const old = await currentVersion(base);
    await createEvent(base, 'old-2', 'rp');
    const head = await currentVersion(base);
    await store().compact(head);
    const w = await HttpWatch.open(base, `${EVENTS}/namespaces/rp/events?watch=true&resourceVersion=${old - 1}`);
    cleanup.push(() => w.abort());
    expect(w.status).toBe(200);
    const [e] = await w.count(1);
    expect(e.type).toBe('ERROR');
    expect(e.object).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' });
    expect(e.object.message).toBe(`too old resource version: ${old - 1} (${head - 1})`);
    await w.ended();
    // At the horizon itself nothing is missing: the watch opens and stays open.
    const ok = await HttpWatch.open(base, `${EVENTS}/namespaces/rp/events?watch=true&resourceVersion=${store().log.firstSeq - 1}`);
    cleanup.push(() => ok.abort());
    await createEvent(base, 'old-3', 'rp');
    const events = await ok.count(2);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED old-2', 'ADDED old-3']);
  });

  it("a replay just after the horizon still knows each key's previous state (an object that stops matching is DELETED)", async () => {
    await createEvent(base, 'h1', 'rp', { tier: 'gold' });
    const filler = await createEvent(base, 'h-filler', 'rp');
    await store().compact(filler + 1);
    expect(store().log.firstSeq).toBe(filler + 1);
    const stop = await labelEvent(base, 'h1', { tier: 'silver' }, 'rp');
    const w = await HttpWatch.open(base, `${EVENTS}/namespaces/rp/events?watch=true&resourceVersion=${filler}&labelSelector=tier%3Dgold`);
    cleanup.push(() => w.abort());
    const [e] = await w.count(1);
    expect(e).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'h1', resourceVersion: String(stop) } } });
  });

  it('a version ahead of the server is waited for, not refused (Kubernetes watch-cache semantics)', async () => {
    const head = await currentVersion(base);
    const w = await HttpWatch.open(base, `${EVENTS}/namespaces/rp/events?watch=true&resourceVersion=${head + 1}`);
    cleanup.push(() => w.abort());
    await createEvent(base, 'ahead-1', 'rp'); // head + 1: not after the version asked for
    await createEvent(base, 'ahead-2', 'rp');
    const [e] = await w.count(1);
    expect(e.object.metadata.name).toBe('ahead-2');
    expect(w.events).toHaveLength(1);
  });
});
