/** The rbac bootstrap controller (src/controllers/rbac-bootstrap.ts) on a real registry: a Store on a MemoryLog. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BOOTSTRAP_CLUSTER_ROLES, ensureBootstrapPolicy } from '../../src/controllers/rbac-bootstrap.js';
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


describe('rbac bootstrap', () => {
  it('creates a bootstrap role that is missing, and leaves one that exists as it is', async () => {
    await ensureBootstrapPolicy(r.objects, kinds, silentLogger);
    const [first, second] = BOOTSTRAP_CLUSTER_ROLES.map((c) => c.metadata.name!);
    const want = r.current('ClusterRole', undefined, first)!.rules;
    await r.objects.delete(r.kind('ClusterRole'), undefined, first, { dryRun: false });
    await r.objects.update(r.kind('ClusterRole'), undefined, second, (cur) => ({ ...cur!, rules: [] }), { dryRun: false });
    await ensureBootstrapPolicy(r.objects, kinds, silentLogger);
    expect(r.current('ClusterRole', undefined, first)!.rules).toEqual(want);
    expect(r.current('ClusterRole', undefined, second)!.rules).toEqual([]);
  });
});
