/** The garbage collector controller (src/controllers/garbage-collector.ts) on a real registry: a Store on a MemoryLog. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGarbageCollector } from '../../src/controllers/garbage-collector.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/registry.js';
import { eventually, openRegistry, roleIn, type TestRegistry } from '../helpers/registry.js';

let r: TestRegistry;
const stops: (() => void)[] = [];
beforeEach(async () => {
  r = await openRegistry();
});
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) stop();
  await r.close();
});


describe('garbage collector', () => {
  it('deletes a dependent whose owner is deleted, and keeps it when deleted with Orphan', async () => {
    stops.push(startGarbageCollector(r.objects, kinds, silentLogger));
    await r.namespace('gc');
    const owner = await r.objects.create(r.kind('Role'), 'gc', roleIn('owner', 'gc'), { dryRun: false });
    const ref = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', name: 'owner', uid: owner.metadata.uid! };
    await r.objects.create(r.kind('Role'), 'gc', roleIn('dependent', 'gc', { ownerReferences: [ref] }), { dryRun: false });
    await r.objects.delete(r.kind('Role'), 'gc', 'owner', { dryRun: false, propagationPolicy: 'Background' });
    await eventually(() => !r.current('Role', 'gc', 'dependent'));

    const owner2 = await r.objects.create(r.kind('Role'), 'gc', roleIn('owner2', 'gc'), { dryRun: false });
    await r.objects.create(r.kind('Role'), 'gc', roleIn('orphan', 'gc', { ownerReferences: [{ ...ref, name: 'owner2', uid: owner2.metadata.uid! }] }), { dryRun: false });
    await r.objects.delete(r.kind('Role'), 'gc', 'owner2', { dryRun: false, propagationPolicy: 'Orphan' });
    await eventually(() => !r.current('Role', 'gc', 'owner2'));
    const orphan = r.current('Role', 'gc', 'orphan');
    expect(orphan).toBeDefined();
    expect(orphan!.metadata.ownerReferences ?? []).toEqual([]);
  });
});
