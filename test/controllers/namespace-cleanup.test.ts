/** The namespace cleanup controller (src/controllers/namespace-cleanup.ts) on a real registry: a Store on a MemoryLog. */
import { describe, expect, it } from 'vitest';
import { startNamespaceCleanup } from '../../src/controllers/namespace-cleanup.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/kinds.js';
import { eventually } from '../helpers/poll.js';
import { registryPerTest, roleIn } from '../helpers/registry.js';

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
    // The stopped controller reads through a door that counts what it is asked; a running one
    // started after it is fed the same changes in the same order, so once that one has emptied
    // the namespace, the stopped one would have acted by then if it still followed the changes.
    const asked: string[] = [];
    const counted = new Proxy(t.r.objects, {
      get: (target, prop, receiver) => {
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (...args: unknown[]) => (asked.push(String(prop)), (v as (...a: unknown[]) => unknown).apply(target, args)) : v;
      },
    });
    const stop = startNamespaceCleanup(counted, kinds, silentLogger);
    stop();
    asked.length = 0;
    stops.push(startNamespaceCleanup(t.r.objects, kinds, silentLogger));
    await t.r.namespace('kept');
    await t.r.objects.create(t.r.kind('Role'), 'kept', roleIn('inside', 'kept'), { dryRun: false });
    await t.r.objects.delete(t.r.kind('Namespace'), undefined, 'kept', { dryRun: false });
    await eventually(() => !t.r.current('Namespace', undefined, 'kept'), { what: 'the running controller emptied the namespace' });
    expect(asked).toEqual([]);
  });
});
