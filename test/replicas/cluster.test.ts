/**
 * Replicas on a three-member etcd cluster: a kill -9 of an etcd member under write load through both
 * replicas loses no acknowledged write, and the member rejoins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestEtcd } from '../helpers/etcd.js';
import { isReady, keepAlive, killAll, request, spawnServer, type ServerChild } from '../server/child.js';
import { tempDir } from '../helpers/temp.js';
import { sleep } from '../helpers/poll.js';

let members: TestEtcd[] = [];
const agent = keepAlive(16);

async function replica(servers: string): Promise<ServerChild> {
  const dataDir = tempDir('orchd-replica-', { until: 'file' });
  const child = await spawnServer(dataDir, ['--storage', 'etcd', '--etcd-servers', servers], { lifeMs: 240_000 });
  await child.waitForLine(isReady, 60_000);
  return child;
}

beforeAll(async () => {
  members = await TestEtcd.cluster(3);
}, 90_000);

afterAll(async () => {
  await killAll();
  await Promise.all(members.map((m) => m.destroy()));
  agent.destroy();
});

const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const NS = '/api/v1/namespaces';

describe('replicas on a three-member etcd', () => {
  it('kill -9 of an etcd member under write load: every acknowledged write is on both replicas; the member rejoins', async () => {
    const servers = members.map((m) => m.url).join(',');
    const [a, b] = await Promise.all([replica(servers), replica(servers)]);
    const acked: string[] = [];
    let stop = false;
    const writer = async (r: ServerChild, prefix: string) => {
      for (let i = 0; i < 300 && !stop; i++) {
        const res = await request(agent, r.url, 'POST', NS, ns(`${prefix}-${i}`)).catch(() => undefined);
        if (res?.status === 201) acked.push(res.body.metadata.name);
      }
    };
    const deadline = setTimeout(() => (stop = true), 60_000);
    const load = Promise.all([writer(a, 'a0'), writer(a, 'a1'), writer(b, 'b0'), writer(b, 'b1')]);
    while (acked.length < 40) await sleep(10);
    await members[0].stop('SIGKILL');
    const atKill = acked.length;
    while (acked.length < atKill + 40 && !stop) await sleep(10);
    stop = true;
    clearTimeout(deadline);
    await load;
    expect(acked.length).toBeGreaterThanOrEqual(atKill + 40);
    for (const r of [a, b]) {
      const res = await request(agent, r.url, 'GET', NS);
      expect(res.status).toBe(200);
      const have = new Set(res.body.items.map((n: { metadata: { name: string } }) => n.metadata.name));
      expect(acked.filter((n) => !have.has(n))).toEqual([]);
    }
    await members[0].start();
    const after = await request(agent, a.url, 'POST', NS, ns('after-rejoin'));
    expect(after.status).toBe(201);
    const got = await request(agent, b.url, 'GET', `${NS}/after-rejoin`);
    expect(got.body.metadata.resourceVersion).toBe(after.body.metadata.resourceVersion);
  }, 180_000);
});
