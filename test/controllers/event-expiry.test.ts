/** The event expiry controller (src/controllers/event-expiry.ts) on a real registry: a Store on a MemoryLog. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEventExpiry } from '../../src/controllers/event-expiry.js';
import { silentLogger } from '../../src/observability/logger.js';
import { fixtures } from '../resources/fixtures.js';
import { eventually } from '../helpers/poll.js';
import { openRegistry, type TestRegistry } from '../helpers/registry.js';

/** The registry's clock, moved by the test; it counts its reads, so a test can wait for sweeps to have looked at it. */
const clock = {
  at: Date.parse('2031-04-05T06:07:08Z'),
  reads: 0,
  now(): Date {
    this.reads++;
    return new Date(this.at);
  },
};
let r: TestRegistry;
let stop = (): void => {};

beforeEach(async () => {
  r = await openRegistry(clock);
});
afterEach(async () => {
  stop();
  await r.close();
});

describe('event expiry', () => {
  it("deletes an Event its time to live after its last write, by the registry's clock", async () => {
    await r.namespace('default');
    stop = startEventExpiry(r.objects, r.kind('Event'), 1, silentLogger, 20);
    await r.objects.create(r.kind('Event'), 'default', fixtures.event(), { dryRun: false });
    const name = fixtures.event().metadata.name;
    // Sweeps go by while the clock stands still (each reads it once): the Event stays however long they take.
    const seen = clock.reads;
    await eventually(() => clock.reads >= seen + 5);
    expect(r.current('Event', 'default', name)).toBeDefined();
    clock.at += 999;
    const later = clock.reads;
    await eventually(() => clock.reads >= later + 3);
    expect(r.current('Event', 'default', name)).toBeDefined();
    clock.at += 1;
    await eventually(() => !r.current('Event', 'default', name));
  });
});
