/** The rbac bootstrap controller (src/controllers/rbac-bootstrap.ts) on a real registry: a Store on a MemoryLog. */
import { describe, expect, it } from 'vitest';
import { BOOTSTRAP_CLUSTER_ROLES, ensureBootstrapPolicy } from '../../src/controllers/rbac-bootstrap.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/kinds.js';
import { registryPerTest } from '../helpers/registry.js';

const t = registryPerTest();

describe('rbac bootstrap', () => {
  it('creates a bootstrap role that is missing, and leaves one that exists as it is', async () => {
    await ensureBootstrapPolicy(t.r.objects, kinds, silentLogger);
    const [first, second] = BOOTSTRAP_CLUSTER_ROLES.map((c) => c.metadata.name!);
    const want = t.r.current('ClusterRole', undefined, first)!.rules;
    await t.r.objects.delete(t.r.kind('ClusterRole'), undefined, first, { dryRun: false });
    await t.r.objects.update(t.r.kind('ClusterRole'), undefined, second, (cur) => ({ ...cur!, rules: [] }), { dryRun: false });
    await ensureBootstrapPolicy(t.r.objects, kinds, silentLogger);
    expect(t.r.current('ClusterRole', undefined, first)!.rules).toEqual(want);
    expect(t.r.current('ClusterRole', undefined, second)!.rules).toEqual([]);
  });
});
