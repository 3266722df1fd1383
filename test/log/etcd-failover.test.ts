/**
 * The etcd log's own client (src/log/etcd/grpc/) going from member to member of --etcd-servers: a
 * member that cannot be reached costs the calls it was given and no more. (The library client the
 * log keeps for its rare calls picks members its own way.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeanEtcd } from '../../src/log/etcd/grpc/client.js';
import { Result, Target } from '../../src/log/etcd/grpc/proto.js';
import { watchPrefix } from '../../src/log/etcd/watch-prefix.js';
import { TestEtcd } from '../helpers/etcd.js';
import { freePort } from '../helpers/free-port.js';
import { eventually } from '../helpers/poll.js';

let etcd: TestEtcd;
beforeAll(async () => {
  etcd = await TestEtcd.start();
}, 60_000);
afterAll(() => etcd?.destroy());

describe('etcd failover', () => {
  it('with a member that refuses connections first in the list, a Txn (never sent to it, so retried) is taken by the next, and a watch made again follows from it', async () => {
    const client = new LeanEtcd({ servers: [`http://127.0.0.1:${await freePort()}`, etcd.url] });
    try {
      const key = Buffer.from('/failover/a');
      const res = await client.txn(
        { compare: [{ key, target: Target.Mod, result: Result.Equal, value: 0 }], success: [{ put: { key, value: Buffer.from('x') } }], failure: [{ range: { key } }] },
        5000,
      );
      expect(res.succeeded).toBe(true);
      // A second write of the same key fails its compare and answers with what it found.
      const again = await client.txn(
        { compare: [{ key, target: Target.Mod, result: Result.Equal, value: 0 }], success: [{ put: { key, value: Buffer.from('y') } }], failure: [{ range: { key } }] },
        5000,
      );
      expect(again.succeeded).toBe(false);
      expect(again.ranges[0].map((kv) => [kv.value.toString(), kv.mod_revision])).toEqual([['x', res.header.revision]]);

      const revisions: number[] = [];
      const w = await watchPrefix(client, Buffer.from('/failover/'), Buffer.from('/failover0'), 1, {
        onEvents: (evs) => revisions.push(...evs.map((e) => e.kv.mod_revision)),
        onProgress: () => undefined,
        onEnd: () => undefined,
      });
      await eventually(() => revisions.includes(res.header.revision));
      w.cancel();
    } finally {
      client.close();
    }
  }, 30_000);
});
