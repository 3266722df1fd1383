/** The cluster role aggregation controller (src/controllers/cluster-role-aggregation.ts) on a real registry: a Store on a MemoryLog. */
import { describe, expect, it } from 'vitest';
import { startClusterRoleAggregation } from '../../src/controllers/cluster-role-aggregation.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/kinds.js';
import type { KubeObject } from '../../src/api/types.js';
import { eventually } from '../helpers/poll.js';
import { registryPerTest } from '../helpers/registry.js';

const t = registryPerTest();
const stops = t.stops;

describe('cluster role aggregation', () => {
  it('gives an aggregated ClusterRole the rules of the roles its selector picks, and follows them', async () => {
    stops.push(startClusterRoleAggregation(t.r.objects, kinds, silentLogger));
    const rule = { apiGroups: ['events.orch.io'], resources: ['events'], verbs: ['get'] };
    const cr = (name: string, body: Partial<KubeObject>): KubeObject => ({ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name }, ...body });
    await t.r.objects.create(t.r.kind('ClusterRole'), undefined, cr('sum', { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { part: 'sum' } }] } }), { dryRun: false });
    await t.r.objects.create(t.r.kind('ClusterRole'), undefined, cr('piece', { rules: [rule], metadata: { name: 'piece', labels: { part: 'sum' } } }), { dryRun: false });
    await eventually(() => (t.r.current('ClusterRole', undefined, 'sum')?.rules as unknown[] | undefined)?.length === 1);
    expect(t.r.current('ClusterRole', undefined, 'sum')!.rules).toEqual([rule]);
    await t.r.objects.delete(t.r.kind('ClusterRole'), undefined, 'piece', { dryRun: false });
    await eventually(() => (t.r.current('ClusterRole', undefined, 'sum')?.rules as unknown[] | undefined)?.length === 0);
  });
});
