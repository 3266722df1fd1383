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

  const named = (name: string) => ({ ...fixtures.event(), metadata: { name, namespace: 'default' } });
  const create = (name: string) => r.objects.create(r.kind('Event'), 'default', named(name), { dryRun: false });
  /** A write that changes nothing an Event forbids changing: a label. */
  const rewrite = (name: string) =>
    r.objects.update(
      r.kind('Event'),
      'default',
      name,
      { ...named(name), metadata: { ...named(name).metadata, labels: { round: '2' }, resourceVersion: r.current('Event', 'default', name)!.metadata.resourceVersion } },
      { dryRun: false },
    );
  const present = (names: string[]) => names.filter((n) => r.current('Event', 'default', n) !== undefined);
  /** Lets a few sweeps go by at the clock as it is (each reads it once). */
  const sweeps = async () => {
    const seen = clock.reads;
    await eventually(() => clock.reads >= seen + 3);
  };

  it('walks Events in the order of their last write: a rewrite moves one after those written since', async () => {
    await r.namespace('default');
    stop = startEventExpiry(r.objects, r.kind('Event'), 1, silentLogger, 20);
    const t0 = clock.at;
    await create('a');
    clock.at = t0 + 500;
    await create('b');
    clock.at = t0 + 600;
    await rewrite('a');
    // b (written at +500) is due before a (last written at +600), though a was created first.
    clock.at = t0 + 1550;
    await eventually(() => present(['a', 'b']).length === 1);
    expect(present(['a', 'b'])).toEqual(['a']);
    await sweeps();
    expect(present(['a', 'b'])).toEqual(['a']);
    clock.at = t0 + 1600;
    await eventually(() => present(['a']).length === 0);
  });

  it('after a start, expires the Events it did not see written by the newest time each carries, oldest first; a write since counts instead', async () => {
    await r.namespace('default');
    const t0 = clock.at;
    // Written before the controller runs (a restart): creationTimestamp is all it has, to the second.
    for (const [name, at] of [
      ['old', 0],
      ['mid', 5_000],
      ['new', 9_000],
    ] as const) {
      clock.at = t0 + at;
      await create(name);
    }
    clock.at = t0 + 10_000;
    stop = startEventExpiry(r.objects, r.kind('Event'), 10, silentLogger, 20);
    await eventually(() => present(['old']).length === 0);
    await sweeps();
    expect(present(['old', 'mid', 'new'])).toEqual(['mid', 'new']);
    clock.at = t0 + 15_000;
    await eventually(() => present(['mid']).length === 0);
    // new is rewritten at +16 s: its time is now that write's, not the +9 s it carried.
    clock.at = t0 + 16_000;
    await rewrite('new');
    clock.at = t0 + 25_000;
    await sweeps();
    expect(present(['new'])).toEqual(['new']);
    clock.at = t0 + 26_000;
    await eventually(() => present(['new']).length === 0);
  });
});
