/** The event expiry controller (src/controllers/event-expiry.ts) on a real registry: a Store on a MemoryLog. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEventExpiry } from '../../src/controllers/event-expiry.js';
import { fixtures } from '../resources/fixtures.js';
import { eventually, openRegistry, type TestRegistry } from '../helpers/registry.js';

let r: TestRegistry;
const stops: (() => void)[] = [];
beforeEach(async () => {
  r = await openRegistry();
});
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) stop();
  await r.close();
});


describe('event expiry', () => {
  it('deletes an Event its time to live after its last write', async () => {
    await r.namespace('default');
    stops.push(startEventExpiry(r.objects, r.kind('Event'), 1, 50));
    await r.objects.create(r.kind('Event'), 'default', fixtures.event(), { dryRun: false });
    const name = fixtures.event().metadata.name;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(r.current('Event', 'default', name)).toBeDefined();
    await eventually(() => !r.current('Event', 'default', name), 5000);
  });
});
