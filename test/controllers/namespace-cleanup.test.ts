/** The namespace cleanup controller (src/controllers/namespace-cleanup.ts) on a real registry: a Store on a MemoryLog. */
import { describe, expect, it } from 'vitest';
import { startNamespaceCleanup } from '../../src/controllers/namespace-cleanup.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/registry.js';
import { eventually, registryPerTest, roleIn } from '../helpers/registry.js';

const t = registryPerTest();
const stops = t.stops;

describe('namespace cleanup', () => {
  it('deletes what a deleted namespace holds, and the namespace once it is empty', async () => {
    stops.push(startNamespaceCleanup(t.r.objects, kinds, silentLogger));
    await t.r.namespace('team');
    await t.r.objects.create(t.r.kind('Role'), 'team', roleIn('inside', 'team'), { dryRun: false });
    await t.r.objects.delete(t.r.kind('Namespace'), undefined, 'team', { dryRun: false });
    await eventually(() => !t.r.current('Role', 'team', 'inside'));
    await eventually(() => !t.r.current('Namespace', undefined, 'team'));
  });

  it('stopped, it no longer cleans up', async () => {
    const stop = startNamespaceCleanup(t.r.objects, kinds, silentLogger);
    stop();
    await t.r.namespace('kept');
    await t.r.objects.create(t.r.kind('Role'), 'kept', roleIn('inside', 'kept'), { dryRun: false });
    await t.r.objects.delete(t.r.kind('Namespace'), undefined, 'kept', { dryRun: false });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(t.r.current('Role', 'kept', 'inside')).toBeDefined();
  });
});
