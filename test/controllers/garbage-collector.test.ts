/** The garbage collector controller (src/controllers/garbage-collector.ts) on a real registry: a Store on a MemoryLog. */
import { describe, expect, it } from 'vitest';
import { startGarbageCollector } from '../../src/controllers/garbage-collector.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/kinds.js';
import { eventually, sleep } from '../helpers/poll.js';
import { registryPerTest, roleIn } from '../helpers/registry.js';

const t = registryPerTest();
const stops = t.stops;

describe('garbage collector', () => {
  it('deletes a dependent whose owner is deleted, and keeps it when deleted with Orphan', async () => {
    stops.push(startGarbageCollector(t.r.objects, kinds, silentLogger));
    await t.r.namespace('gc');
    const owner = await t.r.objects.create(t.r.kind('Role'), 'gc', roleIn('owner', 'gc'), { dryRun: false });
    const ref = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', name: 'owner', uid: owner.metadata.uid! };
    await t.r.objects.create(t.r.kind('Role'), 'gc', roleIn('dependent', 'gc', { ownerReferences: [ref] }), { dryRun: false });
    await t.r.objects.delete(t.r.kind('Role'), 'gc', 'owner', { dryRun: false, propagationPolicy: 'Background' });
    await eventually(() => !t.r.current('Role', 'gc', 'dependent'));

    const owner2 = await t.r.objects.create(t.r.kind('Role'), 'gc', roleIn('owner2', 'gc'), { dryRun: false });
    await t.r.objects.create(t.r.kind('Role'), 'gc', roleIn('orphan', 'gc', { ownerReferences: [{ ...ref, name: 'owner2', uid: owner2.metadata.uid! }] }), { dryRun: false });
    await t.r.objects.delete(t.r.kind('Role'), 'gc', 'owner2', { dryRun: false, propagationPolicy: 'Orphan' });
    await eventually(() => !t.r.current('Role', 'gc', 'owner2'));
    const orphan = t.r.current('Role', 'gc', 'orphan');
    expect(orphan).toBeDefined();
    expect(orphan!.metadata.ownerReferences ?? []).toEqual([]);
  });

  it('indexes what was written before it started; changes committed while it indexes wait and are handled after', async () => {
    await t.r.namespace('gc');
    const role = t.r.kind('Role');
    const owner = await t.r.objects.create(role, 'gc', roleIn('owner', 'gc'), { dryRun: false });
    const ref = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', name: 'owner', uid: owner.metadata.uid! };
    // Enough dependents (of an owner that never was) before this one that the index is built over
    // several turns of the event loop, and the delete below commits before it is whole.
    const other = { ...ref, name: 'never', uid: 'never' };
    for (let i = 0; i < 20_000; i += 1000) {
      await Promise.all(Array.from({ length: 1000 }, (_, j) => t.r.objects.create(role, 'gc', roleIn(`a-${i + j}`, 'gc', { ownerReferences: [other] }), { dryRun: false })));
    }
    await t.r.objects.create(role, 'gc', roleIn('z-dependent', 'gc', { ownerReferences: [ref] }), { dryRun: false });
    stops.push(startGarbageCollector(t.r.objects, kinds, silentLogger));
    await t.r.objects.delete(role, 'gc', 'owner', { dryRun: false, propagationPolicy: 'Background' });
    await eventually(() => !t.r.current('Role', 'gc', 'z-dependent'));
  });

  it('stopped, it deletes nothing more', async () => {
    await t.r.namespace('gc');
    const role = t.r.kind('Role');
    const owner = await t.r.objects.create(role, 'gc', roleIn('owner', 'gc'), { dryRun: false });
    const ref = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', name: 'owner', uid: owner.metadata.uid! };
    await t.r.objects.create(role, 'gc', roleIn('dependent', 'gc', { ownerReferences: [ref] }), { dryRun: false });
    startGarbageCollector(t.r.objects, kinds, silentLogger)();
    await t.r.objects.delete(role, 'gc', 'owner', { dryRun: false, propagationPolicy: 'Background' });
    await sleep(200);
    expect(t.r.current('Role', 'gc', 'dependent')).toBeDefined();
  });
});
