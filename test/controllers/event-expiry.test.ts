/** The event expiry controller (src/controllers/event-expiry.ts) on a real registry: a Store on a MemoryLog. */
import { describe, expect, it } from 'vitest';
import { startEventExpiry } from '../../src/controllers/event-expiry.js';
import { silentLogger } from '../../src/observability/logger.js';
import { fixtures } from '../resources/fixtures.js';
import { eventually } from '../helpers/poll.js';
import { registryPerTest } from '../helpers/registry.js';

const t = registryPerTest();
const stops = t.stops;

describe('event expiry', () => {
  it('deletes an Event its time to live after its last write', async () => {
    await t.r.namespace('default');
    stops.push(startEventExpiry(t.r.objects, t.r.kind('Event'), 1, silentLogger, 50));
    await t.r.objects.create(t.r.kind('Event'), 'default', fixtures.event(), { dryRun: false });
    const name = fixtures.event().metadata.name;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(t.r.current('Event', 'default', name)).toBeDefined();
    await eventually(() => !t.r.current('Event', 'default', name), { timeoutMs: 5000 });
  });
});
