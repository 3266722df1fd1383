/** startControllers (src/controllers/start.ts) on a real registry: a Store on a MemoryLog. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startControllers } from '../../src/controllers/start.js';
import { BOOTSTRAP_CLUSTER_ROLES } from '../../src/controllers/rbac-bootstrap.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/registry.js';
import { openRegistry, type TestRegistry } from '../helpers/registry.js';

let r: TestRegistry;
const stops: (() => void)[] = [];
beforeEach(async () => {
  r = await openRegistry();
});
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) stop();
  await r.close();
});


describe('startControllers', () => {
  it('creates the system namespaces and the bootstrap RBAC policy, once, and starts the controllers', async () => {
    stops.push(...(await startControllers(r.objects, kinds, { logger: silentLogger, eventTtlSeconds: 3600 })));
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) expect(r.current('Namespace', undefined, ns), ns).toBeDefined();
    for (const cr of BOOTSTRAP_CLUSTER_ROLES) expect(r.current('ClusterRole', undefined, cr.metadata.name!), cr.metadata.name).toBeDefined();
    // Garbage collector, namespace cleanup, policy status, aggregation, event expiry.
    expect(stops).toHaveLength(5);
    const seq = r.log.lastSeq;
    stops.push(...(await startControllers(r.objects, kinds, { logger: silentLogger, eventTtlSeconds: 0, policyStatus: false })));
    expect(r.log.lastSeq).toBe(seq);
    expect(stops).toHaveLength(5 + 3);
  });
});
