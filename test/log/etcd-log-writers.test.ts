/**
 * Several writers on one etcd log: what the shared contract suite cannot show with one. Each replica
 * is an EtcdLog (and a Store over it) of its own on the same etcd and prefix.
 */
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecord } from '../../src/log/codec.js';
import { copyOldLayout } from '../../src/log/etcd/copy-old-layout.js';
import { EtcdLog } from '../../src/log/etcd/etcd-log.js';
import { LogError, type LogEntry } from '../../src/log/log.js';
import type { KubeObject } from '../../src/api/types.js';
import { StoreError } from '../../src/store/errors.js';
import { Store } from '../../src/store/store.js';
import { TestEtcd } from '../helpers/etcd.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/poll.js';
import { HoldingProxy } from '../replicas/proxy.js';

let etcd: TestEtcd;
let prefixes = 0;
const prefixOf = new WeakMap<EtcdLog, string>();
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  etcd = await TestEtcd.start();
}, 60_000);
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
afterAll(async () => {
  await etcd?.destroy();
});

/** n replicas' logs on one fresh prefix (or the prefix of `like`), each with a folder of its own. */
async function replicas(n: number, like?: EtcdLog): Promise<EtcdLog[]> {
  const prefix = like ? prefixOf.get(like)! : `/writers-${++prefixes}/`;
  const logs: EtcdLog[] = [];
  for (let i = 0; i < n; i++) {
    const dir = tempDir('orchd-etcd-writer-');
    const log = new EtcdLog({ servers: [etcd.url], prefix, dir });
    await log.open();
    prefixOf.set(log, prefix);
    logs.push(log);
    cleanup.push(async () => {
      await log.close();
    });
  }
  return logs;
}

const put = (log: EtcdLog, key: string, value: unknown, expect?: number) => log.append({ type: 'put', key, value, expect });

async function outcome(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (err: unknown) => (err instanceof LogError ? err.code : String(err)),
  );
}

/** Resolves when log has applied seq. */
function caughtUp(log: EtcdLog, seq: number): Promise<void> {
  return new Promise((resolve) => {
    if (log.lastSeq >= seq) return resolve();
    const sub = log.committed$.subscribe(() => {
      if (log.lastSeq < seq) return;
      sub.unsubscribe();
      resolve();
    });
  });
}

const plain = (e: LogEntry) => ({ seq: e.seq, type: e.type, key: e.key, value: e.value });

describe('EtcdLog with several writers', () => {
  it("each replica applies every replica's entries, in one order, with the same seqs (etcd revisions) and values", async () => {
    const [a, b] = await replicas(2);
    const seen: [LogEntry[], LogEntry[]] = [[], []];
    a.committed$.subscribe((batch) => seen[0].push(...batch));
    b.committed$.subscribe((batch) => seen[1].push(...batch));
    const seqs: number[] = [];
    for (let round = 0; round < 5; round++) {
      seqs.push(await put(a, `a${round}`, { from: 'a', round }).durable);
      await caughtUp(b, a.lastSeq);
      seqs.push(await put(b, `b${round}`, { from: 'b', round }).durable);
      await caughtUp(a, b.lastSeq);
    }
    expect(seen[0].map((e) => e.seq)).toEqual(seqs);
    expect(seen[1].map(plain)).toEqual(seen[0].map(plain));
    expect(seen[0].map((e) => e.key)).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3', 'b3', 'a4', 'b4']);
  });

  it("hundreds of transactions in flight from one replica: each its own revision, all acknowledged, in etcd's order", async () => {
    const [a] = await replicas(1);
    let inFlight = 0;
    let most = 0;
    const appended = Array.from({ length: 500 }, (_, i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      return put(a, `k${i}`, { metadata: { name: `k${i}` }, i }).durable.finally(() => inFlight--);
    });
    const seqs = await Promise.all(appended);
    expect(most).toBe(500);
    expect(new Set(seqs).size).toBe(500);
    const read = (await entriesOf(a, Math.min(...seqs))).filter((e) => e.key.startsWith('k'));
    expect(read.map((e) => e.seq)).toEqual([...seqs].sort((x, y) => x - y));
    for (const e of read) expect((e.value as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBe(String(e.seq));
  });

  it('a write whose key moved since it was decided fails CONFLICT in etcd, with the state it found', async () => {
    const [a, b] = await replicas(2);
    const one = await put(a, 'k', { metadata: {}, n: 1 }, 0).durable;
    const two = await put(a, 'k', { metadata: {}, n: 2 }, one).durable;
    // b decides on the state at one, whether or not it has seen two.
    const err = await put(b, 'k', 'stale', one).durable.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LogError);
    expect((err as LogError).code).toBe('CONFLICT');
    expect((err as LogError).seq).toBe(two);
    expect(((err as LogError).found?.value as { n: number }).n).toBe(2);
    // A create of a key that exists, and a write expecting the right version.
    expect(await outcome(put(b, 'k', 'again', 0).durable)).toBe('CONFLICT');
    expect(await outcome(put(b, 'k', 3, two).durable)).toBe('ok');
  });

  it('a delete carries the state it removed (prev_kv) at its own revision, and frees the key for a create', async () => {
    const [a, b] = await replicas(2);
    const seen: LogEntry[] = [];
    b.committed$.subscribe((batch) => seen.push(...batch));
    const one = await put(a, 'k', { metadata: { name: 'k' }, data: 'last' }, 0).durable;
    const gone = await a.append({ type: 'delete', key: 'k', value: { metadata: { name: 'k' } }, expect: one }).durable;
    await caughtUp(b, gone);
    expect(seen.map((e) => [e.seq, e.type, e.value])).toEqual([
      [one, 'put', { metadata: { name: 'k', resourceVersion: String(one) }, data: 'last' }],
      [gone, 'delete', { metadata: { name: 'k', resourceVersion: String(gone) }, data: 'last' }],
    ]);
    expect(plain((await b.get(gone, 'k'))!)).toEqual(plain(seen[1]));
    expect(plain((await b.get(gone))!)).toEqual(plain(seen[1]));
    expect(await outcome(put(b, 'k', 'new', 0).durable)).toBe('ok');
    expect(await outcome(b.append({ type: 'delete', key: 'absent', value: {} }).durable)).toBe('CONFLICT');
  });

  it("stores on two replicas: concurrent creates of one name, one wins; server-side updates of one hot object all land; a client's stale version is a 409", async () => {
    const logs = await replicas(2);
    const stores = logs.map((log) => new Store({ log }));
    for (const s of stores) {
      await s.start();
      cleanup.push(() => s.close());
    }
    const obj = (n: number): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { n: String(n) } });
    const creates = await Promise.allSettled(stores.map((s) => s.put('/configmaps/default/c', obj(0), 'absent')));
    expect(creates.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = creates.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(StoreError);
    expect((lost.reason as StoreError).code).toBe('KEY_EXISTS');
    const created = (creates.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ seq: number }>).value.seq;
    // Read-modify-write increments from both replicas at once: each decides again on what etcd holds.
    const increments = 20;
    const n = (o: KubeObject) => Number((o as unknown as { data: { n: string } }).data.n);
    await Promise.all(stores.flatMap((s) => Array.from({ length: increments }, () => s.update('/configmaps/default/c', (cur) => ({ kind: 'put', obj: obj(n(cur!.obj) + 1) })))));
    const head = Math.max(...logs.map((l) => l.lastSeq));
    for (const s of stores) await s.waitFor(head, 5000);
    for (const s of stores) expect(n(s.get('/configmaps/default/c')!.obj)).toBe(2 * increments);
    // Two clients that read the same version: one wins, the other's precondition fails on the fresh state.
    const at = stores[0].get('/configmaps/default/c')!.seq;
    expect(at).toBeGreaterThan(created);
    const clientWrite = (s: Store) =>
      s.update('/configmaps/default/c', (cur) => {
        if (cur!.seq !== at) throw new StoreError('CONFLICT', 'c', `stale: ${at}, not ${cur!.seq}`, cur!.seq);
        return { kind: 'put', obj: obj(-1) };
      });
    const both = await Promise.allSettled(stores.map(clientWrite));
    expect(both.map((r) => (r.status === 'fulfilled' ? 200 : (r.reason as StoreError).code)).sort()).toEqual([200, 'CONFLICT']);
  });

  it('replicas opened at once on a fresh prefix share one secret, the one etcd holds: one put it, the others read it', async () => {
    const prefix = `/writers-${++prefixes}/`;
    const logs = Array.from({ length: 4 }, () => new EtcdLog({ servers: [etcd.url], prefix, dir: tempDir('orchd-etcd-writer-') }));
    for (const log of logs) cleanup.push(() => log.close());
    await Promise.all(logs.map((log) => log.open()));
    prefixOf.set(logs[0], prefix);
    const later = await replicas(1, logs[0]);
    const client = new Etcd3({ hosts: etcd.url });
    try {
      const stored = await client.get(`${prefix}#secret`).buffer();
      expect(stored?.length).toBe(32);
      for (const log of [...logs, ...later]) expect(log.secret.equals(stored!)).toBe(true);
    } finally {
      client.close();
    }
  });

  it("a replica's own put comes back from the watch as the object it appended (not decoded again), another replica's as the bytes etcd holds", async () => {
    const [a, b] = await replicas(2);
    const seen = new Map<EtcdLog, LogEntry[]>([
      [a, []],
      [b, []],
    ]);
    for (const log of [a, b]) {
      const sub = log.committed$.subscribe((batch) => seen.get(log)!.push(...batch));
      cleanup.push(async () => sub.unsubscribe());
    }
    const value = { metadata: { name: 'own' }, n: 1 };
    const writer = { user: 'alice', verb: 'create' };
    const seq = await a.append({ type: 'put', key: 'own/x', value, expect: 0, writer }).durable;
    await caughtUp(b, seq);
    const onA = seen.get(a)!.find((e) => e.seq === seq)!;
    const onB = seen.get(b)!.find((e) => e.seq === seq)!;
    expect(onA.value).toBe(value);
    expect(onA.raw).toBeUndefined();
    expect(onB.raw).toBeInstanceOf(Buffer);
    expect(onB.value).toEqual({ metadata: { name: 'own', resourceVersion: String(seq) }, n: 1 });
    expect(value.metadata).toEqual({ name: 'own', resourceVersion: String(seq) });
    expect([onA.time, onA.writer, onA.key, onA.type]).toEqual([onB.time, onB.writer, onB.key, onB.type]);
    expect(onA.time).toBeGreaterThan(0);
  });

  it("a watch response whose last event is the log's own key (#fence) after an object's put moves the view to it: a consistent read is not left one revision behind", async () => {
    const [b] = await replicas(1);
    const prefix = prefixOf.get(b)!;
    const proxy = await HoldingProxy.start(etcd.clientPort);
    cleanup.push(() => proxy.close());
    const a = new EtcdLog({ servers: [proxy.url], prefix, dir: tempDir('orchd-etcd-writer-') });
    await a.open();
    const store = new Store({ log: a });
    await store.start();
    cleanup.push(() => store.close());
    await eventually(() => a.connected, { what: 'the watch through the proxy' });
    const foreign = new Etcd3({ hosts: etcd.url });
    cleanup.push(async () => foreign.close());
    // a loses its watch and makes it again from its next revision once the held traffic goes: by then
    // etcd holds an object's put and a fence after it, which it sends in one catch-up response.
    proxy.hold();
    proxy.drop();
    const object = await put(b, 'g/c/x', { metadata: {}, n: 1 }).durable;
    const fence = Number((await foreign.put(`${prefix}#fence`).value('').exec()).header.revision);
    expect(fence).toBe(object + 1);
    proxy.release();
    await eventually(() => a.lastSeq >= fence, { what: `a's watch at ${fence}` });
    expect(store.get('g/c/x')?.seq).toBe(object);
    expect(store.appliedSeq).toBe(fence);
    expect(await store.headSeq()).toBe(fence);
    expect(await store.waitFor(fence, 0)).toBe(true);
  });

  it("headSeq is etcd's newest revision, before this replica has applied it", async () => {
    const [a, b] = await replicas(2);
    const seq = await put(a, 'k', 1).durable;
    expect(await b.headSeq()).toBeGreaterThanOrEqual(seq);
  });

  it("a foreign writer's keys are holes: reads, gets and a consistent read across them still work", async () => {
    const [a, b] = await replicas(2);
    const foreign = new Etcd3({ hosts: etcd.url });
    cleanup.push(async () => foreign.close());
    const first = await put(a, 'g/c/x', { metadata: {}, n: 1 }).durable;
    for (let i = 0; i < 5; i++) await foreign.put(`/foreign/${i}`).value('not orchd');
    const second = await put(a, 'g/c/y', { metadata: {}, n: 2 }).durable;
    for (let i = 0; i < 5; i++) await foreign.put(`/foreign/after-${i}`).value('not orchd');
    expect(second - first).toBeGreaterThan(5);
    // A consistent read on b: the head is a foreign revision, which a progress notification passes.
    const head = await b.headSeq();
    expect(head).toBeGreaterThan(second);
    await eventually(() => b.lastSeq >= head, { what: `the second writer at ${head}` });
    expect((await entriesOf(b, first)).map((e) => [e.seq, e.key])).toEqual([
      [first, 'g/c/x'],
      [second, 'g/c/y'],
    ]);
    expect((await b.get(second))?.key).toBe('g/c/y');
    expect(await b.get(second + 1)).toBeUndefined();
    // A replica that starts now replays across the holes, and its watch goes on after the head.
    const [c] = await replicas(1, b);
    const store = new Store({ log: c });
    await store.start();
    cleanup.push(() => store.close());
    expect([store.get('g/c/x')?.seq, store.get('g/c/y')?.seq]).toEqual([first, second]);
    expect(store.appliedSeq).toBeGreaterThanOrEqual(head);
    const third = await put(a, 'g/c/z', { metadata: {}, n: 3 }).durable;
    expect(await store.waitFor(third, 5000)).toBe(true);
    expect(store.get('g/c/z')?.obj.metadata.resourceVersion).toBe(String(third));
  });

  it('a newer head asked for while a consistent read is still nudging past holes is reached too, not only the older one', async () => {
    const [a, b] = await replicas(2);
    const foreign = new Etcd3({ hosts: etcd.url });
    cleanup.push(async () => foreign.close());
    await put(a, 'g/c/x', { metadata: {}, n: 1 }).durable;
    await foreign.put('/foreign/older').value('not orchd');
    // The first read's nudge is under way (progress asked every few ms) when the second one comes.
    const older = await b.headSeq();
    await foreign.put('/foreign/newer').value('not orchd');
    const newer = await b.headSeq();
    expect(newer).toBeGreaterThan(older);
    // Once the older head is reached, progress must still be asked for until the newer one is.
    await eventually(() => b.lastSeq >= newer, { what: `the newer head ${newer}`, timeoutMs: 2000 });
  });
});

async function entriesOf(log: EtcdLog, from: number): Promise<LogEntry[]> {
  const out: LogEntry[] = [];
  for await (const page of log.read(from)) out.push(...page);
  return out;
}

describe('moving data of the old layout', () => {
  it("copyOldLayout copies each object's newest record to the layout of today, where a replica reads it stamped with its new revision", async () => {
    const client = new Etcd3({ hosts: etcd.url });
    try {
      const old = 'old-layout/';
      await client.put(`${old}log`).value(Buffer.alloc(0));
      for (const name of ['a', 'b']) {
        const value = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, resourceVersion: '7' }, data: { name } };
        await client.put(Buffer.from(`${old}k//configmaps/default/${name}`)).value(encodeRecord({ type: 'put', key: `/configmaps/default/${name}`, value }));
      }
      const to = `/moved-${++prefixes}/`;
      expect(await copyOldLayout([etcd.url], old, to)).toBe(2);
      const dir = tempDir('orchd-etcd-moved-');
      const log = new EtcdLog({ servers: [etcd.url], prefix: to, dir });
      await log.open();
      const store = new Store({ log });
      await store.start();
      cleanup.push(async () => {
        await store.close();
        await log.close();
      });
      const a = store.get('/configmaps/default/a')!;
      expect(a.obj.data).toEqual({ name: 'a' });
      expect(a.obj.metadata.resourceVersion).toBe(String(a.seq));
      expect(a.seq).not.toBe(7);
      expect(store.get('/configmaps/default/b')).toBeDefined();
    } finally {
      client.close();
    }
  });
});
