/** The controllers' reconcile loop and coalescing (src/controllers/work-queue.ts). */
import { describe, expect, it } from 'vitest';
import { Subject } from 'rxjs';
import { coalesce, runSerially } from '../../src/controllers/work-queue.js';
import { currentAdmissionContext, runWithAdmissionContext } from '../../src/admission/index.js';
import type { Logger } from '../../src/observability/logger.js';
import { eventually, sleep } from '../helpers/poll.js';

function recordingLogger(): { logger: Logger; warned: string[] } {
  const warned: string[] = [];
  return { warned, logger: { info() {}, error() {}, warn: (msg, fields) => warned.push(`${msg}: ${String(fields?.error)}`) } };
}

describe('runSerially', () => {
  it("runs work one item at a time in order; a failure is logged under the controller's name and the next item runs", async () => {
    const { logger, warned } = recordingLogger();
    const items = new Subject<string>();
    const ran: string[] = [];
    let running = 0;
    const sub = runSerially('test queue', logger, items, async (name) => {
      running++;
      expect(running).toBe(1);
      await sleep(5);
      ran.push(name);
      running--;
      if (name === 'b') throw new Error('b failed');
    });
    for (const name of ['a', 'b', 'c']) items.next(name);
    await eventually(() => ran.length === 3);
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(warned).toEqual(['test queue: Error: b failed']);
    sub.unsubscribe();
  });

  it('runs as the system user, not as the user whose write triggered it', async () => {
    const items = new Subject<number>();
    const users: string[] = [];
    const sub = runSerially('test queue', recordingLogger().logger, items, async () => void users.push(currentAdmissionContext().user.username));
    const alice = { user: { username: 'alice', uid: '', groups: [], extra: {} }, warn() {}, annotate() {} };
    runWithAdmissionContext(alice, () => items.next(1));
    await eventually(() => users.length === 1);
    expect(users).toEqual(['system:apiserver']);
    sub.unsubscribe();
  });

  it('stopped, it finishes the run under way and drops the items waiting', async () => {
    const items = new Subject<string>();
    const ran: string[] = [];
    const sub = runSerially('test queue', recordingLogger().logger, items, async (name) => {
      await sleep(20);
      ran.push(name);
    });
    items.next('first');
    items.next('second');
    sub.unsubscribe();
    items.next('third');
    await sleep(80);
    expect(ran).toEqual(['first']);
  });
});

describe('coalesce', () => {
  it('passes each item of a burst once, in the order first seen, and a later burst again', async () => {
    const items = new Subject<string>();
    const out: string[] = [];
    const sub = items.pipe(coalesce(20)).subscribe((x) => out.push(x));
    for (const x of ['p', 'q', 'p', 'p', 'q', 'r']) items.next(x);
    expect(out).toEqual([]); // not before the burst is over
    await eventually(() => out.length === 3);
    expect(out).toEqual(['p', 'q', 'r']);
    items.next('p');
    await eventually(() => out.length === 4);
    expect(out).toEqual(['p', 'q', 'r', 'p']);
    sub.unsubscribe();
  });
});
