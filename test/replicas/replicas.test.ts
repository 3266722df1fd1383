/**
 * Several orchd replicas sharing one log on a real etcd (issue 17): each replica is `orchd serve
 * --storage etcd` as a child process with a data folder of its own, on one single-member etcd.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { get as httpGet, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestEtcd } from '../helpers/etcd.js';
import { isReady, keepAlive, killAll, request, spawnServer, type ServerChild } from '../server/child.js';

let etcd: TestEtcd;
const dirs: string[] = [];
const agent = keepAlive(16);

async function replica(dir?: string): Promise<ServerChild & { dir: string }> {
  const dataDir = dir ?? (await mkdtemp(join(tmpdir(), 'orchd-replica-')));
  if (!dir) dirs.push(dataDir);
  const child = await spawnServer(dataDir, ['--storage', 'etcd', '--etcd-servers', etcd.url], { lifeMs: 240_000 });
  await child.waitForLine(isReady, 60_000);
  return Object.assign(child, { dir: dataDir });
}

beforeAll(async () => {
  etcd = await TestEtcd.start();
}, 60_000);

afterAll(async () => {
  await killAll();
  await etcd?.destroy();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  agent.destroy();
});

const ns = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const NS = '/api/v1/namespaces';

interface WatchEvent {
  type: string;
  object: { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> } };
}

/** A watch stream on base+path: its events as they come; stop() ends it. */
function watch(base: string, path: string): { events: WatchEvent[]; until(pred: (e: WatchEvent[]) => boolean, ms?: number): Promise<void>; stop(): void } {
  const events: WatchEvent[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  const req: ClientRequest = httpGet(base + path, (res) => {
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      const parts = (partial + c).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) if (line) events.push(JSON.parse(line) as WatchEvent);
      for (const w of waiters) w();
    });
  });
  req.on('error', () => {});
  return {
    events,
    until(pred, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pred(events)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`watch ${path}: not there after ${ms} ms; got ${JSON.stringify(events.map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion]))}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    stop: () => req.destroy(),
  };
}

const names = (events: WatchEvent[]) => events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`);

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
      const [x, y] = await Promise.all(
        [a, b].map((r, i) => request(agent, r.url, 'PUT', `${NS}/${name}`, { ...base, metadata: { ...base.metadata, labels: { by: String(i) } } })),
      );
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
});
