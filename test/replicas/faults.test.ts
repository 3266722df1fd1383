/**
 * Faults of replicas on one etcd (issue 17 part 3): a replica that loses its etcd stops answering
 * consistent reads (503 with Retry-After) until it has caught up; an etcd killed and started again
 * under running replicas: they reconnect, and their watches go on without a gap.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestEtcd } from '../helpers/etcd.js';
import { isReady, keepAlive, killAll, request, spawnServer, type Reply, type ServerChild } from '../server/child.js';
import { HoldingProxy } from './proxy.js';
import { names, watch } from './watch.js';

let etcd: TestEtcd;
let proxy: HoldingProxy;
const dirs: string[] = [];
const agent = keepAlive(16);

async function replica(etcdUrl: string, dir?: string): Promise<ServerChild & { dataDir: string }> {
  const dataDir = dir ?? (await mkdtemp(join(tmpdir(), 'orchd-replica-')));
  if (!dir) dirs.push(dataDir);
  const child = await spawnServer(dataDir, ['--storage', 'etcd', '--etcd-servers', etcdUrl], { lifeMs: 240_000 });
  await child.waitForLine(isReady, 60_000);
  return Object.assign(child, { dataDir });
}

beforeAll(async () => {
  etcd = await TestEtcd.start();
  proxy = await HoldingProxy.start(etcd.clientPort);
}, 60_000);

afterAll(async () => {
  await killAll();
  await proxy?.close();
  await etcd?.destroy();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  agent.destroy();
});

const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const NS = '/api/v1/namespaces';

/** Retries req until it answers one of want, for at most ms. */
async function until(req: () => Promise<Reply | undefined>, want: number[], ms: number): Promise<Reply> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await req().catch(() => undefined);
    if (r && want.includes(r.status)) return r;
    if (Date.now() > deadline) throw new Error(`no ${want.join('/')} after ${ms} ms: last ${JSON.stringify(r)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('faults', () => {
  let a: ServerChild;
  let cut: ServerChild & { dataDir: string };
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
      expect(names(w.events)).toEqual([
        `ADDED before-kill@${before.body.metadata.resourceVersion}`,
        `ADDED after-restart@${after.body.metadata.resourceVersion}`,
      ]);
    } finally {
      w.stop();
    }
  }, 90_000);

  it('compaction past what a cut-off replica applied: it stops following (/readyz fails, consistent reads 503); restarted, it starts from etcd\'s state', async () => {
    // Its connection lost: when it comes back, the watch must start again from where it was.
    proxy.hold();
    proxy.drop();
    const written: Reply[] = [];
    try {
      for (let i = 0; i < 3; i++) written.push(await request(agent, a.url, 'POST', NS, ns(`compacted-${i}`)));
      expect(written.map((r) => r.status)).toEqual([201, 201, 201]);
      const client = new Etcd3({ hosts: etcd.url });
      try {
        const head = Number((await client.kv.range({ key: Buffer.from('orchd/log') })).header.revision);
        await client.kv.compact({ revision: head, physical: true });
      } finally {
        client.close();
      }
    } finally {
      proxy.release();
    }
    const ready = await until(() => request(agent, cut.url, 'GET', '/readyz?verbose'), [500, 503], 20_000);
    expect(String(ready.body)).toContain('etcd');
    expect((await request(agent, cut.url, 'GET', `${NS}/compacted-2`)).status).toBe(503);
    cut.signal('SIGTERM');
    await cut.exited;
    cut = await replica(proxy.url, cut.dataDir);
    for (const w of written) {
      const got = await request(agent, cut.url, 'GET', `${NS}/${w.body.metadata.name}`);
      expect(got.status).toBe(200);
      expect(got.body.metadata.resourceVersion).toBe(w.body.metadata.resourceVersion);
    }
  }, 90_000);
});
