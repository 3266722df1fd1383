/** startControllers (src/controllers/start.ts) on a real registry: a Store on a MemoryLog. */
import { describe, expect, it } from 'vitest';
import { startControllers } from '../../src/controllers/start.js';
import { BOOTSTRAP_CLUSTER_ROLES } from '../../src/controllers/rbac-bootstrap.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/kinds.js';
import { registryPerTest } from '../helpers/registry.js';
import { typeCheckPolicy } from '../../src/admission/index.js';

const t = registryPerTest();
const stops = t.stops;

describe('startControllers', () => {
  it('creates the system namespaces and the bootstrap RBAC policy, once, and starts the controllers', async () => {
    stops.push(...(await startControllers(t.r.objects, kinds, { logger: silentLogger, typeCheckPolicy, eventTtlSeconds: 3600 })));
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) expect(t.r.current('Namespace', undefined, ns), ns).toBeDefined();
    for (const cr of BOOTSTRAP_CLUSTER_ROLES) expect(t.r.current('ClusterRole', undefined, cr.metadata.name!), cr.metadata.name).toBeDefined();
    // Garbage collector, namespace cleanup, policy status, aggregation, event expiry (of both Event kinds).
    expect(stops).toHaveLength(6);
    const seq = t.r.log.lastSeq;
    stops.push(...(await startControllers(t.r.objects, kinds, { logger: silentLogger, typeCheckPolicy, eventTtlSeconds: 0, policyStatus: false })));
    expect(t.r.log.lastSeq).toBe(seq);
    expect(stops).toHaveLength(6 + 3);
  });
});
