/** The namespace cleanup controller (src/controllers/namespace-cleanup.ts) on a real registry: a Store on a MemoryLog. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startNamespaceCleanup } from '../../src/controllers/namespace-cleanup.js';
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


describe('namespace cleanup', () => {
  it('deletes what a deleted namespace holds, and the namespace once it is empty', async () => {
    stops.push(startNamespaceCleanup(r.objects, kinds, silentLogger));
    await r.namespace('team');
    await r.objects.create(r.kind('Role'), 'team', roleIn('inside', 'team'), { dryRun: false });
    await r.objects.delete(r.kind('Namespace'), undefined, 'team', { dryRun: false });
    await eventually(() => !r.current('Role', 'team', 'inside'));
    await eventually(() => !r.current('Namespace', undefined, 'team'));
  });

  it('stopped, it no longer cleans up', async () => {
    const stop = startNamespaceCleanup(r.objects, kinds, silentLogger);
    stop();
    await r.namespace('kept');
    await r.objects.create(r.kind('Role'), 'kept', roleIn('inside', 'kept'), { dryRun: false });
    await r.objects.delete(r.kind('Namespace'), undefined, 'kept', { dryRun: false });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.current('Role', 'kept', 'inside')).toBeDefined();
  });
});
