/**
 * Several writers on one etcd log: what the shared contract suite cannot show with one. Each replica
 * is an EtcdLog (and a Store over it) of its own on the same etcd and prefix.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EtcdLog } from '../../src/log/etcd/etcd-log.js';
import { LogError, type LogEntry } from '../../src/log/log.js';
import type { KubeObject } from '../../src/resources/types.js';
import { StoreError } from '../../src/store/errors.js';
import { Store } from '../../src/store/store.js';
import { TestEtcd } from '../helpers/etcd.js';
import { tempDir } from '../helpers/temp.js';

let etcd: TestEtcd;
let prefixes = 0;
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

/** n replicas' logs on one fresh prefix, each with a folder of its own. */
async function replicas(n: number): Promise<EtcdLog[]> {
  const prefix = `writers-${++prefixes}/`;
  const logs: EtcdLog[] = [];
  for (let i = 0; i < n; i++) {
    const dir = tempDir('orchd-etcd-writer-');
    const log = new EtcdLog({ servers: [etcd.url], prefix, dir });
    await log.open();
    logs.push(log);
    cleanup.push(async () => {
      await log.close();
    });
  }
  return logs;
}

const put = (log: EtcdLog, key: string, value: unknown, expect?: number) => log.append(() => ({ type: 'put', key, value, expect }));

async function outcome(p: Promise<void>): Promise<string> {
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
  it('each replica applies every replica\'s entries, in one order, with the same seqs and values', async () => {
    const [a, b] = await replicas(2);
    const seen: [LogEntry[], LogEntry[]] = [[], []];
    a.committed$.subscribe((batch) => seen[0].push(...batch));
    b.committed$.subscribe((batch) => seen[1].push(...batch));
    for (let round = 0; round < 5; round++) {
      await put(a, `a${round}`, { from: 'a', round }).durable;
      await caughtUp(b, a.lastSeq);
      await put(b, `b${round}`, { from: 'b', round }).durable;
      await caughtUp(a, b.lastSeq);
    }
    expect(seen[0].map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(seen[1].map(plain)).toEqual(seen[0].map(plain));
    expect(seen[0].map((e) => e.key)).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3', 'b3', 'a4', 'b4']);
  });

  it('two appends that take the same seq on two replicas: exactly one is written, the other fails RACED', async () => {
    const [a, b] = await replicas(2);
    const [x, y] = [put(a, 'k', 'from a'), put(b, 'k', 'from b')];
    expect([x.seq, y.seq]).toEqual([1, 1]);
    const outcomes = [await outcome(x.durable), await outcome(y.durable)];
    expect([...outcomes].sort()).toEqual(['RACED', 'ok']);
    await Promise.all([caughtUp(a, 1), caughtUp(b, 1)]);
    expect((await a.get(1))?.value).toBe(outcomes[0] === 'ok' ? 'from a' : 'from b');
  });

  it('a write whose key moved since it was decided fails CONFLICT, in etcd, even when its seq is free', async () => {
    const [a, b] = await replicas(2);
    await put(a, 'k', 1, 0).durable;
    await caughtUp(b, 1);
    await put(a, 'k', 2, 1).durable; // seq 2: k is now at 2
    await caughtUp(b, 2);
    // b decided on the state at 1: its seq (3) is free, its key is not where it thinks.
    const stale = put(b, 'k', 'stale', 1);
    expect(stale.seq).toBe(3);
    const err = await stale.durable.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(LogError);
    expect((err as LogError).code).toBe('CONFLICT');
    // A create of a key that exists, and a write expecting the right version.
    expect(await outcome(put(b, 'k', 'again', 0).durable)).toBe('CONFLICT');
    expect(await outcome(put(b, 'k', 3, 2).durable)).toBe('ok');
    expect(b.lastSeq).toBe(3);
  });

  it('a delete frees the key for a create that expects it absent', async () => {
    const [a, b] = await replicas(2);
    await put(a, 'k', 1, 0).durable;
    await a.append(() => ({ type: 'delete', key: 'k', value: { last: 1 }, expect: 1 })).durable;
    await caughtUp(b, 2);
    expect(await outcome(put(b, 'k', 'new', 0).durable)).toBe('ok');
  });

  it('stores on two replicas: concurrent creates of one name, one wins; concurrent updates all land, none lost', async () => {
    const logs = await replicas(2);
    const stores = logs.map((log) => new Store({ log }));
    for (const s of stores) {
      await s.start();
      cleanup.push(() => s.close());
    }
    const obj = (n: number): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { n: String(n) } });
    const creates = await Promise.allSettled(stores.map((s) => s.put('configmaps/default/c', obj(0), 'absent')));
    expect(creates.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = creates.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(StoreError);
    expect((lost.reason as StoreError).code).toBe('KEY_EXISTS');
    // Read-modify-write increments from both replicas at once: each one decides again on a conflict.
    const increments = 10;
    await Promise.all(
      stores.flatMap((s) =>
        Array.from({ length: increments }, () =>
          s.update('configmaps/default/c', (cur) => ({ kind: 'put', obj: obj(Number((cur!.obj as unknown as { data: { n: string } }).data.n) + 1) })),
        ),
      ),
    );
    const seq = Math.max(...logs.map((l) => l.lastSeq));
    for (const s of stores) await s.waitFor(seq, 5000);
    for (const s of stores) expect((s.get('configmaps/default/c')!.obj as unknown as { data: { n: string } }).data.n).toBe(String(2 * increments));
    expect(stores[0].get('configmaps/default/c')!.seq).toBe(stores[1].get('configmaps/default/c')!.seq);
  });

  it('headSeq is the newest seq any replica wrote, before this replica has applied it', async () => {
    const [a, b] = await replicas(2);
    await put(a, 'k', 1).durable;
    expect(await b.headSeq()).toBe(1);
    expect(await a.headSeq()).toBe(1);
  });

  it('a replica sends its next batch once etcd answered the last one, without waiting for its watch to bring that one back', async () => {
    const [a] = await replicas(1);
    // The replica's watch, silenced (no end is reported, so it is not made again): nothing comes back.
    const inside = a as unknown as { watch: { cancel(): void }; follow(): Promise<void> };
    inside.watch.cancel();
    const first = put(a, 'first', 1);
    await until(async () => (await a.headSeq()) === 1);
    const second = put(a, 'second', 2);
    expect(second.seq).toBe(2);
    // In etcd although the first one is not acknowledged yet (its writer hears back after the views applied it).
    await until(async () => (await a.headSeq()) === 2);
    expect(a.lastSeq).toBe(0);
    let acknowledged = false;
    void first.durable.then(() => (acknowledged = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(acknowledged).toBe(false);
    // The watch back: both come in, in order, and their writers hear back.
    await inside.follow();
    await Promise.all([first.durable, second.durable]);
    expect(a.lastSeq).toBe(2);
  });
});

/** Polls check until it holds, for at most ms. */
async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
