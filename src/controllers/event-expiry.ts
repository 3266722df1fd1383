import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { splitKey } from '../api/object-keys.js';
import type { Registry } from '../registry/registry.js';
import type { Logger } from '../observability/logger.js';
import { exhaustMap, interval, Subscription } from 'rxjs';
import { systemJob } from './work-queue.js';

/** Events a sweep looks at between two turns of the event loop. */
const SWEEP_PAGE = 256;

/**
 * Events are retained for a limited time (--event-ttl, default 1 h): each Event expires ttl after
 * its last write, as a Kubernetes lease would, and expiry is an ordinary delete in the log so watchers
 * see DELETED and history keeps it. Write times are known for writes seen by this process; after a
 * restart the newest timestamp the object carries stands in: read once per object by the first sweep
 * and remembered, so sweeps do not decode every Event each time, nor leave them decoded in the view.
 */
export function startEventExpiry(objects: Registry, kind: KindStrategy, ttlSeconds: number, log: Logger, sweepMs = Math.min(10_000, ttlSeconds * 100)): () => void {
  const lastWrite = new Map<string, number>();
  const subs = new Subscription();
  subs.add(
    objects.changes(kind).subscribe((batch) => {
      const now = objects.clock.now().getTime();
      for (const c of batch) {
        if (c.type === 'DELETED') lastWrite.delete(c.key);
        else lastWrite.set(c.key, now);
      }
    }),
  );
  const sweep = async () => {
    const cutoff = objects.clock.now().getTime() - ttlSeconds * 1000;
    const expired: KubeObject[] = [];
    // Page by page, yielding between pages: a sweep over 100k Events in one go held requests for
    // 100 ms or more (and the first one, which decodes every Event, for far longer).
    for (let after: string | undefined; ; await nextTurn()) {
      const page = take(objects.list(kind, undefined, after), SWEEP_PAGE);
      if (page.length === 0) break;
      after = splitKey(page[page.length - 1].key).suffix;
      for (const s of page) {
        let t = lastWrite.get(s.key);
        if (t === undefined) {
          // Gone or rewritten since the page was taken (the changes above saw it): not this one.
          if (objects.currentAt(s.key) !== s) continue;
          lastWrite.set(s.key, (t = writtenAt(objects.peek(s))));
        }
        if (t <= cutoff) expired.push(objects.peek(s));
      }
    }
    for (const o of expired) {
      await objects.delete(kind, o.metadata.namespace, o.metadata.name ?? '', { dryRun: false, preconditions: { resourceVersion: o.metadata.resourceVersion } }).catch(() => undefined); // changed or gone meanwhile: the next sweep decides again
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

function writtenAt(o: KubeObject): number {
  const series = (o.series as { lastObservedTime?: string } | undefined)?.lastObservedTime;
  const times = [o.metadata.creationTimestamp, series, o.eventTime as string | undefined].filter((t): t is string => typeof t === 'string');
  const ms = times.map((t) => Date.parse(t)).filter((n) => !Number.isNaN(n));
  return ms.length ? Math.max(...ms) : 0;
}
