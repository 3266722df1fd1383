/**
 * Replicas on etcd laid out as kube-apiserver lays it out (issue 25): a resourceVersion is the etcd
 * revision of the write, other writers' revisions are holes, server-side retries on one hot object
 * all land, and what a watcher gets, what the create answered and what etcd stores agree.
 */
import { rm } from 'node:fs/promises';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEntry } from '../../src/log/codec.js';
import { TestEtcd } from '../helpers/etcd.js';
import { eventually } from '../helpers/poll.js';
import { keepAlive, killAll, request, type ServerChild } from '../server/child.js';
import { startReplica } from './replica.js';
import { watch } from './watch.js';

let etcd: TestEtcd;
let foreign: Etcd3;
const dirs: string[] = [];
const agent = keepAlive(64);

const replica = () => startReplica(etcd.url);

beforeAll(async () => {
  etcd = await TestEtcd.start();
  foreign = new Etcd3({ hosts: etcd.url });
}, 60_000);

afterAll(async () => {
  await killAll();
  foreign?.close();
  await etcd?.destroy();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  agent.destroy();
});

const CM = '/api/v1/namespaces';
const cm = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

describe('replicas on the kube-apiserver layout', () => {
  let a: ServerChild;
  let b: ServerChild;
  beforeAll(async () => {
    [a, b] = await Promise.all([replica(), replica()]);
    // Both answer a consistent read soon after start: one left short of etcd's head (a revision it
    // has passed but not applied) answers 503 for as long as nobody writes.
    for (const r of [a, b]) {
      let last = '';
      await eventually(
        async () => {
          const res = await request(agent, r.url, 'GET', CM);
          last = `${res.status} ${JSON.stringify(res.body?.message ?? '')}`;
          return res.status === 200;
        },
        { timeoutMs: 60_000, stepMs: 200, what: () => `a consistent list on ${r.url} (last: ${last})` },
      );
    }
  }, 180_000);

  it("a resourceVersion is the etcd revision of the write; the watchers on both replicas, the create's answer, a get and etcd's stored record agree field for field", async () => {
    const first = await request(agent, a.url, 'GET', CM);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const start = first.body.metadata.resourceVersion as string;
    const watchers = [a, b].map((r) => watch(r.url, `${CM}?watch=1&resourceVersion=${start}`));
    try {
      const created = await request(agent, a.url, 'POST', CM, { ...cm('parity'), metadata: { name: 'parity', labels: { x: 'y' }, annotations: { note: 'a "quoted" value, ключ 🎉' } } });
      expect(created.status).toBe(201);
      const rv = created.body.metadata.resourceVersion as string;
      for (const w of watchers) await w.until((ev) => ev.some((e) => e.object.metadata.name === 'parity'));
      const got = await request(agent, b.url, 'GET', `${CM}/parity`);
      const stored = await foreign.get('/orchd/registry//namespaces//parity').buffer();
      const revision = (await foreign.kv.range({ key: Buffer.from('/orchd/registry//namespaces//parity') })).kvs[0].mod_revision;
      expect(rv).toBe(revision);
      // etcd holds the object without its resourceVersion; a reader stamps it from the revision.
      const value = decodeEntry(Number(revision), stored!).value as { metadata: Record<string, unknown> };
      expect(stored!.includes('resourceVersion')).toBe(false);
      for (const seen of [...watchers.map((w) => w.events.find((e) => e.object.metadata.name === 'parity')!.object), got.body, created.body]) {
        expect(seen).toEqual(value);
        expect(seen.metadata.resourceVersion).toBe(rv);
      }
    } finally {
      for (const w of watchers) w.stop();
    }
  });

  it('update and patch without a resourceVersion on one hot object from both replicas: every one lands; two with the same stale one: one 200, one 409', async () => {
    expect((await request(agent, a.url, 'POST', CM, cm('hot', { n: '0' }))).status).toBe(201);
    const writes = Array.from({ length: 24 }, (_, i) => request(agent, (i % 2 ? b : a).url, 'PUT', `${CM}/hot`, cm('hot', { n: String(i + 1) })));
    const answers = await Promise.all(writes);
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    expect(new Set(answers.map((r) => r.body.metadata.resourceVersion)).size).toBe(24);
    const last = answers.reduce((x, y) => (Number(x.body.metadata.resourceVersion) > Number(y.body.metadata.resourceVersion) ? x : y));
    for (const r of [a, b]) expect((await request(agent, r.url, 'GET', `${CM}/hot`)).body).toEqual(last.body);
    const base = last.body;
    const both = await Promise.all([a, b].map((r, i) => request(agent, r.url, 'PUT', `${CM}/hot`, { ...base, metadata: { ...base.metadata, labels: { by: String(i) } } })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it("another writer's keys in the same etcd are holes: lists, continue tokens across replicas, watches and consistent reads go on", async () => {
    const first = await request(agent, a.url, 'GET', CM);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const before = first.body.metadata.resourceVersion as string;
    const w = watch(b.url, `${CM}?watch=1&resourceVersion=${before}`);
    try {
      const made: string[] = [];
      for (let i = 0; i < 6; i++) {
        for (let j = 0; j < 3; j++) await foreign.put(`/not-orchd/${i}-${j}`).value('x');
        const r = await request(agent, (i % 2 ? a : b).url, 'POST', CM, cm(`holes-${i}`));
        expect(r.status).toBe(201);
        made.push(`holes-${i}@${r.body.metadata.resourceVersion}`);
      }
      // The head is a foreign revision now: a consistent read on either replica still answers.
      await foreign.put('/not-orchd/last').value('x');
      for (const r of [a, b]) {
        const list = await request(agent, r.url, 'GET', CM);
        expect(list.status).toBe(200);
        expect(list.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(expect.arrayContaining(made.map((m) => m.split('@')[0])));
      }
      // Pages of 2, each asked of the other replica.
      const paged: string[] = [];
      let token = '';
      for (let page = 0; page < 20; page++) {
        const r = await request(agent, (page % 2 ? a : b).url, 'GET', `${CM}?limit=2${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
        expect(r.status).toBe(200);
        paged.push(...r.body.items.map((o: { metadata: { name: string } }) => o.metadata.name));
        token = r.body.metadata.continue ?? '';
        if (!token) break;
      }
      expect(paged.filter((n) => n.startsWith('holes-'))).toEqual(made.map((m) => m.split('@')[0]));
      await w.until((ev) => ev.filter((e) => e.object.metadata.name.startsWith('holes-')).length === made.length);
      expect(w.events.filter((e) => e.object.metadata.name.startsWith('holes-')).map((e) => `${e.object.metadata.name}@${e.object.metadata.resourceVersion}`)).toEqual(made);
    } finally {
      w.stop();
    }
  });
});
