/**
 * Faults of replicas on one etcd (issue 17 part 3): a replica that loses its etcd stops answering
 * consistent reads (503 with Retry-After) until it has caught up; an etcd killed and started again
 * under running replicas: they reconnect, and their watches go on without a gap; etcd compacted past
 * what a cut-off replica applied: its watchers get 410 and it moves to etcd's state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestEtcd } from '../helpers/etcd.js';
import { keepAlive, killAll, request, type Reply, type ServerChild } from '../server/child.js';
import { startReplica } from './replica.js';
import { HoldingProxy } from './proxy.js';
import { names, watch } from './watch.js';
import { eventually } from '../helpers/poll.js';

let etcd: TestEtcd;
let proxy: HoldingProxy;
const agent = keepAlive(16);

const replica = (etcdUrl: string, dir?: string) => startReplica(etcdUrl, dir);

beforeAll(async () => {
  etcd = await TestEtcd.start();
  proxy = await HoldingProxy.start(etcd.clientPort);
}, 60_000);

afterAll(async () => {
  await killAll();
  await proxy?.close();
  await etcd?.destroy();
  agent.destroy();
});

const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const NS = '/api/v1/namespaces';

/** Retries req until it answers one of want, for at most ms. */
async function until(req: () => Promise<Reply | undefined>, want: number[], ms: number): Promise<Reply> {
  let last: Reply | undefined;
  return eventually(
    async () => {
      last = await req().catch(() => undefined);
      return last && want.includes(last.status) ? last : undefined;
    },
    { timeoutMs: ms, stepMs: 200, what: () => `${want.join('/')} (last answer: ${JSON.stringify(last)})` },
  );
}

describe('faults', () => {
  let a: ServerChild;
  let cut: ServerChild & { dir: string };
  beforeAll(async () => {
    [a, cut] = await Promise.all([replica(etcd.url), replica(proxy.url)]);
  }, 120_000);

  it('a replica cut off from etcd answers consistent reads 503 with Retry-After, older reads from its view, and catches up when etcd is back', async () => {
    expect((await request(agent, a.url, 'POST', NS, ns('before-cut'))).status).toBe(201);
    expect((await request(agent, cut.url, 'GET', `${NS}/before-cut`)).status).toBe(200);
    proxy.hold();
    try {
      const created = await request(agent, a.url, 'POST', NS, ns('during-cut'));
      expect(created.status).toBe(201);
      const consistent = await request(agent, cut.url, 'GET', `${NS}/during-cut`);
      expect(consistent.status).toBe(503);
      expect(consistent.body).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503, details: { retryAfterSeconds: 1 } });
      const list = await request(agent, cut.url, 'GET', `${NS}?resourceVersion=0`);
      expect(list.status).toBe(200);
      const names = list.body.items.map((n: { metadata: { name: string } }) => n.metadata.name);
      expect(names).toContain('before-cut');
      expect(names).not.toContain('during-cut');
    } finally {
      proxy.release();
    }
    const after = await until(() => request(agent, cut.url, 'GET', `${NS}/during-cut`), [200], 20_000);
    expect(after.body.metadata.name).toBe('during-cut');
  }, 60_000);

  it('etcd killed (-9) and started again: writes fail with 503 meanwhile, then both replicas go on, and a watch across it misses nothing', async () => {
    const start = (await request(agent, cut.url, 'GET', NS)).body.metadata.resourceVersion as string;
    const w = watch(cut.url, `${NS}?watch=1&resourceVersion=${start}`);
    try {
      const before = await request(agent, a.url, 'POST', NS, ns('before-kill'));
      expect(before.status).toBe(201);
      await w.until((ev) => ev.some((e) => e.object.metadata.name === 'before-kill'));
      await etcd.stop('SIGKILL');
      const down = await request(agent, a.url, 'POST', NS, ns('while-down'));
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ kind: 'Status', code: 503 });
      await etcd.start();
      const after = await until(() => request(agent, a.url, 'POST', NS, ns('after-restart')), [201], 30_000);
      const got = await until(() => request(agent, cut.url, 'GET', `${NS}/after-restart`), [200], 30_000);
      expect(got.body.metadata.resourceVersion).toBe(after.body.metadata.resourceVersion);
      await w.until((ev) => ev.some((e) => e.object.metadata.name === 'after-restart'));
      expect(names(w.events)).toEqual([`ADDED before-kill@${before.body.metadata.resourceVersion}`, `ADDED after-restart@${after.body.metadata.resourceVersion}`]);
    } finally {
      w.stop();
    }
  }, 90_000);

  it("compaction past what a cut-off replica applied: its watchers get 410 Expired, it lists etcd's state and serves it (deletes and all), and a watch from before answers 410", async () => {
    const doomed = await request(agent, a.url, 'POST', NS, ns('deleted-while-cut'));
    expect(doomed.status).toBe(201);
    await until(() => request(agent, cut.url, 'GET', `${NS}/deleted-while-cut`), [200], 20_000);
    const from = (await request(agent, cut.url, 'GET', NS)).body.metadata.resourceVersion as string;
    const w = watch(cut.url, `${NS}?watch=1&resourceVersion=${from}`);
    const written: Reply[] = [];
    try {
      // Its connection lost, and what etcd sends it meanwhile with it: when it comes back, its watch
      // starts again from where it was, which the compaction below has removed.
      proxy.hold();
      proxy.drop();
      try {
        for (let i = 0; i < 3; i++) written.push(await request(agent, a.url, 'POST', NS, ns(`compacted-${i}`)));
        expect(written.map((r) => r.status)).toEqual([201, 201, 201]);
        expect((await request(agent, a.url, 'DELETE', `${NS}/deleted-while-cut`)).status).toBe(200);
        await etcd.compactToHead();
      } finally {
        proxy.release();
      }
      await w.until((ev) => ev.some((e) => e.type === 'ERROR'), 20_000);
      const error = w.events.find((e) => e.type === 'ERROR')!.object as unknown as Record<string, unknown>;
      expect(error).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
      // Nothing of what it missed was handed out as events before the 410.
      expect(w.events.filter((e) => e.type !== 'ERROR' && e.type !== 'BOOKMARK')).toEqual([]);
    } finally {
      w.stop();
    }
    const listOf = async (url: string) => {
      const r = await request(agent, url, 'GET', NS);
      expect(r.status).toBe(200);
      return r.body.items.map((n: { metadata: { name: string; resourceVersion: string } }) => `${n.metadata.name}@${n.metadata.resourceVersion}`).sort();
    };
    // A consistent list: served once the replica has moved to etcd's state.
    const relisted = (await until(() => request(agent, cut.url, 'GET', NS), [200], 20_000)).body;
    expect(relisted.items.map((n: { metadata: { name: string } }) => n.metadata.name)).not.toContain('deleted-while-cut');
    expect(await listOf(cut.url)).toEqual(await listOf(a.url));
    for (const r of written) expect(await listOf(cut.url)).toContain(`${r.body.metadata.name}@${r.body.metadata.resourceVersion}`);
    expect((await request(agent, cut.url, 'GET', '/readyz')).status).toBe(200);
    // A watch from a version before the state: gone, as on kube-apiserver.
    const again = watch(cut.url, `${NS}?watch=1&resourceVersion=${from}`);
    try {
      await again.until((ev) => ev.some((e) => e.type === 'ERROR'));
      expect(again.events[0]).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    } finally {
      again.stop();
    }
    // And it follows the log again: a write on the other replica reaches a fresh watch on it.
    const fresh = watch(cut.url, `${NS}?watch=1&resourceVersion=${relisted.metadata.resourceVersion}`);
    try {
      const later = await request(agent, a.url, 'POST', NS, ns('after-relist'));
      expect(later.status).toBe(201);
      await fresh.until((ev) => ev.some((e) => e.object.metadata.name === 'after-relist'));
      expect(names(fresh.events)).toEqual([`ADDED after-relist@${later.body.metadata.resourceVersion}`]);
    } finally {
      fresh.stop();
    }
  }, 90_000);
});
