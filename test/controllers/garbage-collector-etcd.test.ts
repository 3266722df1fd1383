/**
 * The garbage collector on a replica of a log on etcd (src/controllers/garbage-collector.ts), where
 * every change, another replica's as much as its own, arrives as the bytes etcd's watch brought.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGarbageCollector } from '../../src/controllers/garbage-collector.js';
import { EtcdLog } from '../../src/log/etcd/etcd-log.js';
import { silentLogger } from '../../src/observability/logger.js';
import { LazyObject } from '../../src/store/stored-object.js';
import { kinds } from '../../src/resources/kinds.js';
import { TestEtcd } from '../helpers/etcd.js';
import { eventually, sleep } from '../helpers/poll.js';
import { openRegistry, roleIn, type TestRegistry } from '../helpers/registry.js';
import { tempDir } from '../helpers/temp.js';

let etcd: TestEtcd;
const cleanup: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  etcd = await TestEtcd.start();
}, 60_000);
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
afterAll(async () => {
  await etcd?.destroy();
});

let prefixes = 0;
/** Two replicas' registries on one fresh prefix. */
async function twoReplicas(): Promise<[TestRegistry<EtcdLog>, TestRegistry<EtcdLog>]> {
  const prefix = `/gc-${++prefixes}/`;
  const open = async () => {
    const r = await openRegistry(undefined, new EtcdLog({ servers: [etcd.url], prefix, dir: tempDir('orchd-gc-etcd-') }));
    cleanup.push(() => r.close());
    return r;
  };
  return [await open(), await open()];
}

describe('garbage collector on etcd', () => {
  it('leaves undecoded the objects written without owners (they ask nothing of it), and still deletes a dependent whose owner another replica deleted', async () => {
    const [a, b] = await twoReplicas();
    cleanup.push(startGarbageCollector(b.objects, kinds, silentLogger));
    await a.namespace('gc');
    const role = a.kind('Role');
    const names = Array.from({ length: 20 }, (_, i) => `plain-${i}`);
    for (const n of names) await a.objects.create(role, 'gc', roleIn(n, 'gc'), { dryRun: false });
    const onB = (n: string) => b.store.get(b.objects.key(role, 'gc', n));
    await eventually(() => names.every((n) => onB(n) !== undefined));
    // Let the collector's queue take every change B applied.
    await sleep(100);
    for (const n of names) {
      const s = onB(n)!;
      expect(s instanceof LazyObject && !s.isDecoded, n).toBe(true);
    }

    const owner = await a.objects.create(role, 'gc', roleIn('owner', 'gc'), { dryRun: false });
    const ref = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', name: 'owner', uid: owner.metadata.uid! };
    await a.objects.create(role, 'gc', roleIn('dependent', 'gc', { ownerReferences: [ref] }), { dryRun: false });
    await a.objects.delete(role, 'gc', 'owner', { dryRun: false, propagationPolicy: 'Background' });
    await eventually(() => !a.current('Role', 'gc', 'dependent'));
  });
});
