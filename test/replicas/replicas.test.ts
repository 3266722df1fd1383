/**
 * Several orchd replicas sharing one log on a real etcd (issue 17): each replica is `orchd serve
 * --storage etcd` as a child process with a data folder of its own, on one single-member etcd.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestEtcd } from '../helpers/etcd.js';
import { keepAlive, killAll, request, type ServerChild } from '../server/child.js';
import { startReplica } from './replica.js';
import { names, watch } from './watch.js';
import { sleep } from '../helpers/poll.js';

let etcd: TestEtcd;
const agent = keepAlive(16);

const replica = (dir?: string) => startReplica(etcd.url, dir);

beforeAll(async () => {
  etcd = await TestEtcd.start();
}, 60_000);

afterAll(async () => {
  await killAll();
  await etcd?.destroy();
  agent.destroy();
});

const ns = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const NS = '/api/v1/namespaces';

describe('replicas on one etcd', () => {
  let a: ServerChild;
  let b: ServerChild;
  beforeAll(async () => {
    [a, b] = await Promise.all([replica(), replica()]);
  }, 120_000);

  it('a write on one replica is read on the other with the same resourceVersion', async () => {
    const created = await request(agent, a.url, 'POST', NS, ns('one', { k: 'v' }));
    expect(created.status).toBe(201);
    const got = await request(agent, b.url, 'GET', `${NS}/one`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    expect(got.body.metadata.labels).toMatchObject({ k: 'v' });
  });

  it('a write on one replica reaches a watch on the other, with the same resourceVersion', async () => {
    const list = await request(agent, b.url, 'GET', NS);
    const w = watch(b.url, `${NS}?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`);
    try {
      const created = await request(agent, a.url, 'POST', NS, ns('watched'));
      expect(created.status).toBe(201);
      const rv = created.body.metadata.resourceVersion;
      await w.until((ev) => ev.some((e) => e.object.metadata.name === 'watched'));
      expect(names(w.events)).toEqual([`ADDED watched@${rv}`]);
    } finally {
      w.stop();
    }
  });

  it('reads on the other replica right after each write are consistent: they wait for the write to arrive', async () => {
    for (let i = 0; i < 20; i++) {
      const created = await request(agent, a.url, 'POST', NS, ns(`consistent-${i}`));
      expect(created.status).toBe(201);
      const [got, list] = await Promise.all([request(agent, b.url, 'GET', `${NS}/consistent-${i}`), request(agent, b.url, 'GET', NS)]);
      expect(got.status).toBe(200);
      expect(got.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
      expect(Number(list.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(created.body.metadata.resourceVersion));
      expect(list.body.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toContain(`consistent-${i}`);
    }
  });

  it('two conflicting updates through different replicas: exactly one wins, the other gets 409', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `contended-${round}`;
      const created = await request(agent, a.url, 'POST', NS, ns(name));
      const base = created.body;
      const [x, y] = await Promise.all([a, b].map((r, i) => request(agent, r.url, 'PUT', `${NS}/${name}`, { ...base, metadata: { ...base.metadata, labels: { by: String(i) } } })));
      expect([x.status, y.status].sort()).toEqual([200, 409]);
      const loser = x.status === 409 ? x : y;
      expect(loser.body).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });
      const winner = x.status === 200 ? x : y;
      for (const r of [a, b]) {
        const got = await request(agent, r.url, 'GET', `${NS}/${name}`);
        expect(got.body.metadata).toMatchObject({ resourceVersion: winner.body.metadata.resourceVersion, labels: winner.body.metadata.labels });
      }
    }
  });

  it('a watch resumed on the other replica from its last resourceVersion misses nothing and repeats nothing', async () => {
    const start = (await request(agent, a.url, 'GET', NS)).body.metadata.resourceVersion as string;
    const first = watch(a.url, `${NS}?watch=1&resourceVersion=${start}`);
    const written: string[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await request(agent, (i % 2 === 0 ? a : b).url, 'POST', NS, ns(`resumed-${i}`));
      expect(r.status).toBe(201);
      written.push(`ADDED resumed-${i}@${r.body.metadata.resourceVersion}`);
      if (i === 14) {
        await first.until((ev) => ev.length >= 15);
        first.stop();
      }
    }
    const seen = names(first.events);
    const last = first.events[first.events.length - 1].object.metadata.resourceVersion;
    const second = watch(b.url, `${NS}?watch=1&resourceVersion=${last}`);
    try {
      await second.until((ev) => seen.length + names(ev).length >= written.length);
      expect([...seen, ...names(second.events)]).toEqual(written);
    } finally {
      second.stop();
    }
  });

  it('kill -9 of a replica under write load: every acknowledged write is on every replica, and on it after its restart', async () => {
    const victim = await replica();
    const acked: string[] = [];
    let stop = false;
    const writer = async (r: ServerChild, prefix: string) => {
      for (let i = 0; i < 400 && !stop; i++) {
        const res = await request(agent, r.url, 'POST', NS, ns(`${prefix}-${i}`)).catch(() => undefined);
        if (res?.status === 201) acked.push(res.body.metadata.name);
        else if (r === victim) return; // it is gone
      }
    };
    const deadline = setTimeout(() => (stop = true), 60_000);
    const load = Promise.all([0, 1, 2, 3].map((w) => writer(victim, `victim-${w}`)).concat([0, 1].map((w) => writer(b, `survivor-${w}`))));
    while (acked.filter((n) => n.startsWith('victim')).length < 40) await sleep(10);
    victim.signal('SIGKILL');
    await victim.exited;
    stop = true;
    clearTimeout(deadline);
    await load;
    const victimAcked = acked.filter((n) => n.startsWith('victim'));
    expect(victimAcked.length).toBeGreaterThanOrEqual(40);
    const listed = async (r: ServerChild) => {
      const res = await request(agent, r.url, 'GET', NS);
      expect(res.status).toBe(200);
      return { rv: res.body.metadata.resourceVersion as string, names: new Set(res.body.items.map((n: { metadata: { name: string } }) => n.metadata.name)) };
    };
    for (const r of [a, b]) {
      const { names: have } = await listed(r);
      expect(acked.filter((n) => !have.has(n))).toEqual([]);
    }
    const back = await replica(victim.dir);
    const [onBack, onB] = [await listed(back), await listed(b)];
    expect(acked.filter((n) => !onBack.names.has(n))).toEqual([]);
    expect([...onBack.names].sort()).toEqual([...onB.names].sort());
    back.signal('SIGTERM');
    await back.exited;
  }, 180_000);
});
