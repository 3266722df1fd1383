import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Running, ServeOptions } from '../../src/serve.js';
import { LocalKmsPlugin } from '../../bench/peers/local-kms-plugin.js';
import { TestEtcd } from '../helpers/etcd.js';
import { HoldingProxy } from '../replicas/proxy.js';
import { watch } from '../replicas/watch.js';
import { call } from '../helpers/server.js';
import { configOf, create, event, eventsConfig, EVENTS, kmsProvider, marker, start } from './helpers.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/poll.js';

/*
 * KMS v2 on replicas sharing one log on etcd: each replica makes a data key of its own, sealed by
 * the one plugin (bench/peers/local-kms-plugin.ts, gRPC on a unix socket). A value written by one replica
 * reaches the other through etcd sealed under a data key that replica never made: it has the plugin
 * open the key (as kube-apiserver does with the encrypted DEK stored beside each value) and caches it.
 */

const FAST: ServeOptions['kmsTimings'] = { pollIntervalMs: 100, failedPollIntervalMs: 100 };

let plugin: LocalKmsPlugin;
const servers: Running[] = [];
const etcds: TestEtcd[] = [];

beforeAll(async () => {
  plugin = new LocalKmsPlugin(join(tempDir(), 'kms.sock'));
  await plugin.start();
}, 60_000);
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
  for (const e of etcds.splice(0)) await e.destroy();
});
afterAll(async () => {
  await plugin?.stop();
});

/** Two replicas on a fresh etcd, both with the kms provider for events; the second through `via` when given. */
async function replicas(via?: (etcd: TestEtcd) => Promise<string>): Promise<[Running, Running, TestEtcd]> {
  const config = await configOf(eventsConfig(kmsProvider('plugin', plugin.endpoint)));
  const etcd = await TestEtcd.start();
  etcds.push(etcd);
  const one = async (url: string) => {
    const s = await start(tempDir(), config, { storage: 'etcd', etcd: { servers: [url] }, kmsTimings: FAST });
    servers.push(s);
    return s;
  };
  return [await one(etcd.url), await one(via ? await via(etcd) : etcd.url), etcd];
}

/** GETs path on url until it answers 200 (the replica has applied it), for at most ms. */
async function got(url: string, path: string, ms = 10_000): Promise<{ status: number; body: any; text: string }> {
  let r = await call(url, 'GET', path);
  // Past the deadline the last answer is the caller's to assert on.
  await eventually(async () => r.status === 200 || (r = await call(url, 'GET', path)).status === 200, { timeoutMs: ms, stepMs: 100 }).catch(() => undefined);
  return r;
}

describe('kms v2 on replicas', () => {
  it("a value sealed by another replica's data key reads on this one, live and in lists and watches, the key opened once through the plugin", async () => {
    const [a, b] = await replicas();
    const decryptsBefore = plugin.calls.decrypt;
    // b watches events from now on: the events arrive through etcd, not from b's own writes.
    const from = (await call(b.url, 'GET', EVENTS)).body.metadata.resourceVersion as string;
    const w = watch(b.url, `${EVENTS}?watch=1&resourceVersion=${from}`);
    const marks = [marker(), marker(), marker()];
    for (const [i, m] of marks.entries()) await create(a.url, `from-a-${i}`, m);
    for (const [i, m] of marks.entries()) {
      const r = await got(b.url, `${EVENTS}/from-a-${i}`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.metadata.annotations.marker).toBe(m);
    }
    const list = await call(b.url, 'GET', EVENTS);
    expect(list.status, list.text).toBe(200);
    expect(list.body.items.map((e: any) => e.metadata.name)).toEqual(['from-a-0', 'from-a-1', 'from-a-2']);
    // a's one data key, opened once by b however many values it sealed.
    expect(plugin.calls.decrypt - decryptsBefore).toBe(1);
    await w.until((ev) => ev.length >= 3);
    w.stop();
    const annotated = w.events as unknown as { type: string; object: { metadata: { name: string; annotations?: Record<string, string> } } }[];
    expect(annotated.map((e) => [e.type, e.object.metadata.name, e.object.metadata.annotations?.marker])).toEqual(marks.map((m, i) => ['ADDED', `from-a-${i}`, m]));
    // And the other way: b's writes (under b's own data key) read on a.
    const mb = marker();
    await create(b.url, 'from-b', mb);
    const back = await got(a.url, `${EVENTS}/from-b`);
    expect(back.status, back.text).toBe(200);
    expect(back.body.metadata.annotations.marker).toBe(mb);
  }, 60_000);

  it("a replica whose plugin cannot open another replica's data key reports the object corrupt, not lost, and serves the rest", async () => {
    const [a, b] = await replicas();
    // Decrypt answers UNAVAILABLE more often than a seed is retried: b cannot open a's data key.
    plugin.failNextDecrypts = 100;
    try {
      await create(a.url, 'sealed-by-a', marker());
      const r = await got(b.url, `${EVENTS}/sealed-by-a`, 3000);
      expect(r.status).toBe(500);
      expect(r.text).toContain('sealed-by-a');
    } finally {
      plugin.failNextDecrypts = 0;
    }
    expect((await call(b.url, 'POST', EVENTS, event('own-on-b', marker()))).status).toBe(201);
    expect((await call(b.url, 'GET', `${EVENTS}/own-on-b`)).status).toBe(200);
  }, 60_000);

  it("a replica that fell behind a compaction lists etcd's state with values sealed by another replica's data key, opened through the plugin", async () => {
    let proxy: HoldingProxy | undefined;
    const [a, b, etcd] = await replicas(async (e) => (proxy = await HoldingProxy.start(e.clientPort)).url);
    try {
      const from = (await call(b.url, 'GET', EVENTS)).body.metadata.resourceVersion as string;
      const w = watch(b.url, `${EVENTS}?watch=1&resourceVersion=${from}`);
      proxy!.hold();
      proxy!.drop();
      const m = marker();
      try {
        // Two writes: etcd keeps the revision it compacts to, so b's watch must start before it.
        await create(a.url, 'while-b-was-away', m);
        await create(a.url, 'also-while-away', marker());
        await etcd.compactToHead();
      } finally {
        proxy!.release();
      }
      await w.until((ev) => ev.length > 0, 20_000);
      w.stop();
      expect(w.events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
      const r = await got(b.url, `${EVENTS}/while-b-was-away`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.metadata.annotations.marker).toBe(m);
    } finally {
      await proxy?.close();
    }
  }, 60_000);
});
