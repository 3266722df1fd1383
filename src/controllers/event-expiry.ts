import type { KindStrategy } from '../api/strategy.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { splitKey } from '../api/object-keys.js';
import type { Registry } from '../registry/registry.js';
import { fieldPath, type StoredObject } from '../registry/reads.js';
import type { Logger } from '../observability/logger.js';
import { exhaustMap, interval, Subscription } from 'rxjs';
import { systemJob } from './work-queue.js';

/** Events the first sweep looks at between two turns of the event loop. */
const SWEEP_PAGE = 256;

/**
 * Events are retained for a limited time (--event-ttl, default 1 h): each Event expires ttl after
 * its last write, as a Kubernetes lease would, and expiry is an ordinary delete in the log so watchers
 * see DELETED and history keeps it. Write times are known for writes seen by this process; after a
 * restart the newest timestamp the object carries stands in: read once per object, from its bytes,
 * by the first sweep and remembered, so no sweep decodes every Event or leaves them decoded in the view.
 *
 * A sweep walks Events oldest write first and stops at the first one not yet expired, so it costs
 * what expires, not every Event: at 1M Events a sweep of them all took ~1.1 s of CPU every 10 s
 * (bench/RESULTS.md 67). The Events written since the start are kept in the order of their last write
 * (a write moves its key to the end of the Map); the ones found by the first sweep, in the order of
 * the times they carry.
 */
export function startEventExpiry(objects: Registry, kind: KindStrategy, ttlSeconds: number, log: Logger, sweepMs = Math.min(10_000, ttlSeconds * 100)): () => void {
  const lastWrite = new Map<string, number>();
  /** Events not written since the start, oldest first (from the first sweep on): [time, key]; those before next are done with. */
  let restored: [number, string][] | undefined;
  let next = 0;
  /** Restored Events whose delete failed while they stayed as they were: the next sweep tries again. */
  const retry = new Set<string>();
  const subs = new Subscription();
  subs.add(
    objects.changes(kind).subscribe((batch) => {
      const now = objects.clock.now().getTime();
      for (const c of batch) {
        lastWrite.delete(c.key);
        if (c.type !== 'DELETED') lastWrite.set(c.key, now);
      }
    }),
  );
  // Written since the start, its own time counts; gone, nothing is.
  const unwritten = (key: string) => (lastWrite.has(key) ? undefined : objects.currentAt(key));
  const sweep = async () => {
    restored ??= await timesCarried(objects, kind, lastWrite);
    const cutoff = objects.clock.now().getTime() - ttlSeconds * 1000;
    // Each as it is now: a write after this makes its delete fail on the precondition, not delete the new version.
    const expired: { key: string; s: StoredObject; restored: boolean }[] = [];
    const due = (key: string, s: StoredObject | undefined, restored: boolean) => s && expired.push({ key, s, restored });
    for (const key of retry) due(key, unwritten(key), true);
    retry.clear();
    for (; next < restored.length && restored[next][0] <= cutoff; next++) due(restored[next][1], unwritten(restored[next][1]), true);
    if (next * 2 > restored.length) [restored, next] = [restored.slice(next), 0];
    for (const [key, t] of lastWrite) {
      if (t > cutoff) break;
      due(key, objects.currentAt(key), false);
    }
    for (const e of expired) {
      const o = objects.peek(e.s);
      // Changed or gone meanwhile: the changes above saw it, and the next sweep decides again.
      const deleted = await objects.delete(kind, o.metadata.namespace, o.metadata.name ?? '', { dryRun: false, preconditions: { resourceVersion: o.metadata.resourceVersion } }).then(
        () => true,
        () => false,
      );
      if (!deleted && e.restored && unwritten(e.key) === e.s) retry.add(e.key);
    }
  };
  // A tick that comes while a sweep of many Events is still going is dropped (exhaustMap), not queued.
  subs.add(
    interval(sweepMs)
      .pipe(exhaustMap(() => systemJob('event expiry', log, sweep)))
      .subscribe(),
  );
  return () => subs.unsubscribe();
}

/**
 * The Events not written since the start, with the newest time each carries, oldest first. Page by
 * page, yielding between pages: one pass over 100k Events held requests for 100 ms or more, and this
 * one reads each Event's times from its bytes where nothing has decoded it (ObjectReads.stringsOf).
 */
async function timesCarried(objects: Registry, kind: KindStrategy, lastWrite: ReadonlyMap<string, number>): Promise<[number, string][]> {
  const found: [number, string][] = [];
  for (let after: string | undefined; ; await nextTurn()) {
    const page = take(objects.list(kind, undefined, after), SWEEP_PAGE);
    if (page.length === 0) break;
    after = splitKey(page[page.length - 1].key).suffix;
    for (const s of page) if (!lastWrite.has(s.key)) found.push([writtenAt(objects.stringsOf(s, TIMES)), s.key]);
  }
  return found.sort((a, b) => a[0] - b[0]);
}

/** The next n items (fewer at the end). */
function take<T>(items: Iterator<T>, n: number): T[] {
  const out: T[] = [];
  while (out.length < n) {
    const r = items.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

/** The times an Event carries: created, last seen in its series, its own. */
const TIMES = [fieldPath('metadata', 'creationTimestamp'), fieldPath('series', 'lastObservedTime'), fieldPath('eventTime')];

/** The newest of an Event's times (TIMES), in ms; 0 when it carries none. */
function writtenAt(times: readonly (string | undefined)[]): number {
  let newest = 0;
  for (const t of times) {
    const ms = t === undefined ? NaN : Date.parse(t);
    if (ms > newest) newest = ms;
  }
  return newest;
}
