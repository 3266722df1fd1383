import { concat, concatMap, defer, EMPTY, finalize, from, ignoreElements, interval, map, mergeWith, Observable, of, race, repeat, take, takeUntil, throwError, timer } from 'rxjs';
import type { Subscription } from 'rxjs';
import { StoredEntry } from '../log/codec.js';
import { LogError, type LogEntry } from '../log/log.js';
import type { KubeObject } from '../api/types.js';
import { StoreError } from './errors.js';
import type { WatchRoute } from './fanout.js';
import type { WatchSource } from './sources.js';
import { Change, type ChangeType } from './change.js';
import { peekObject, storedOf, type StoredObject } from './stored-object.js';

/** What one watcher asks for. */
export interface WatchRequest {
  collection: string;
  /** Only keys starting with this prefix (the collection, or a namespace of it). */
  keyPrefix: string;
  /** Where the live index files this watcher (see WatchRoute); { by: 'scan' } always works. */
  route: WatchRoute;
  /** Changes with seq > after; undefined = first the current state as ADDED events. */
  after?: number;
  /** With the current state: wait (up to freshWaitMs) until the view has applied this version. */
  freshAs?: number;
  freshWaitMs?: number;
  /** The whole selector; an object that stops matching is DELETED for this watcher, one that starts is ADDED. */
  matches?: (o: KubeObject) => boolean;
  /** After the current state, a bookmark marking its end (sendInitialEvents=true with bookmarks). */
  initialEventsEnd: boolean;
  /** Periodic bookmarks (undefined: none), once the current state is out. */
  bookmarkIntervalMs?: number;
  timeoutMs: number;
  /** How long the watcher may go without draining its socket while it is behind before it is ended. */
  stallTimeoutMs: number;
  /** The current objects under keyPrefix, for the initial state. */
  current: () => Iterable<StoredObject>;
}

/**
 * How far the watcher's connection is behind, as its writer sees it. The engine never queues: it
 * reads the log only as fast as the connection drains, and stops live delivery past the bound.
 */
export interface WatchFlow {
  /** Unsent bytes above the high-water mark: the initial state and catch-up wait for the drain. */
  needsDrain(): boolean;
  /** Settles once below the high-water mark, or once the connection is gone. */
  drained(): Promise<void>;
  /** Unsent bytes past the bound: live changes stop, and the watcher catches up from the log once drained. */
  behind(): boolean;
}

export type WatchEvent =
  /** A change for this watcher, of the type its selector makes of it; change carries the shared encodings. */
  | { type: ChangeType; change: Change }
  /** An object of the initial state: encoded for this watcher alone, its encoding kept by nothing. */
  | { type: 'ADDED'; initial: StoredObject }
  | { type: 'BOOKMARK'; seq: number; initialEventsEnd?: boolean };

export type WatchErrorCode = 'STALLED' | 'TOO_LARGE_VERSION' | 'COMPACTED';

/**
 * Why the engine ended a watch; `seq` is the last version it delivered (STALLED), asked for
 * (TOO_LARGE_VERSION) or could not replay from (COMPACTED); `current` is the newest version applied
 * (the oldest still kept, for COMPACTED).
 */
export class WatchError extends Error {
  constructor(
    readonly code: WatchErrorCode,
    readonly seq: number | undefined,
    readonly current: number,
    message: string,
  ) {
    super(message);
    this.name = 'WatchError';
  }
}

/** setTimeout takes at most 2^31-1 ms; a longer timeoutSeconds would otherwise fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * Objects of the initial state handed over at a time (one socket write). One: a streaming list is
 * written as fast as its peer reads, where joining several lines per write only adds garbage (with
 * 8 or 64 per write a streaming list of 100k objects grew the server by 21–25 MiB, with 1 by 12).
 */
const INITIAL_CHUNK = 1;
/** Bytes of log a catch-up reads at a time, so ten catching-up watchers hold megabytes, not their history. */
const PAGE_BYTES = 1 << 20;

/**
 * One watcher's events, in batches (one per commit batch, initial chunk or log page), each batch
 * meant for one socket write: the current state when asked, then changes after a version with no gap
 * and no duplicate, filtered by the selector with Kubernetes' transitions, bookmarks, and the timeout.
 * Ends with a WatchError (COMPACTED when the version asked for is gone).
 */
export function watch$(store: WatchSource, req: WatchRequest, flow: WatchFlow): Observable<WatchEvent[]> {
  const events$ =
    req.after !== undefined
      ? follow$(store, req, flow, req.after)
      : defer(() => initialState(store, req)).pipe(
          concatMap(({ at, snapshot }) =>
            concat(
              initialChunks$(req, flow, snapshot, at),
              req.initialEventsEnd && req.bookmarkIntervalMs !== undefined ? of([bookmark(at, true)]) : EMPTY,
              // What changed while the state was written is read back from the log, not queued in memory.
              follow$(store, req, flow, at),
            ),
          ),
        );
  const start = () => {
    const closed = store.streams.watcherOpened(req.collection);
    return events$.pipe(takeUntil(timer(Math.min(req.timeoutMs, MAX_TIMER_MS))), finalize(closed));
  };
  return defer(() => {
    // A watch from a compacted version is expired at once, before it is counted among the open
    // watches. A reset under way erases every version before its end, though its deletes may not
    // have committed yet: a watch from one is expired too, never handed the deletes; a watch of the
    // current state starts from the state the reset leaves.
    const after = req.after;
    if (after !== undefined && after + 1 < store.log.firstSeq) return throwError(() => new WatchError('COMPACTED', after, store.oldestVersion, `version ${after} is compacted`));
    if (!store.resetting) return start();
    if (after !== undefined) return throwError(() => new WatchError('COMPACTED', after, store.appliedSeq, `version ${after} is compacted: the server is being reset`));
    return from(store.resetting).pipe(concatMap(start));
  });
}

const bookmark = (seq: number, initialEventsEnd?: boolean): WatchEvent => (initialEventsEnd ? { type: 'BOOKMARK', seq, initialEventsEnd } : { type: 'BOOKMARK', seq });

/** The state at `at`: references to the current objects, taken in one tick (stored versions are immutable). */
async function initialState(store: WatchSource, req: WatchRequest): Promise<{ at: number; snapshot: (StoredObject | undefined)[] }> {
  if (req.freshAs !== undefined && store.appliedSeq < req.freshAs) {
    const fresh = await store.waitFor(req.freshAs, req.freshWaitMs ?? 3000);
    if (!fresh) throw new WatchError('TOO_LARGE_VERSION', req.freshAs, store.appliedSeq, `too large resource version: ${req.freshAs}`);
  }
  return { at: store.appliedSeq, snapshot: Array.from(req.current()) };
}

/**
 * The snapshot as ADDED events, a chunk at a time and only as fast as the connection drains; each
 * reference is dropped once handed over, so versions replaced meanwhile can be collected. A loop,
 * not concatMap over the chunks: chunks that complete at once would nest one subscription per chunk
 * on the stack, each holding its chunk, until the connection first fills.
 */
function initialChunks$(req: WatchRequest, flow: WatchFlow, snapshot: (StoredObject | undefined)[], at: number): Observable<WatchEvent[]> {
  return new Observable<WatchEvent[]>((sub) => {
    let i = 0;
    let waiting: Subscription | undefined;
    const more = (): void => {
      while (!sub.closed && i < snapshot.length) {
        const events: WatchEvent[] = [];
        for (const end = Math.min(snapshot.length, i + INITIAL_CHUNK); i < end; i++) {
          const s = snapshot[i]!;
          snapshot[i] = undefined;
          if (!req.matches || req.matches(peekObject(s))) events.push({ type: 'ADDED', initial: s });
        }
        if (events.length > 0) sub.next(events);
        if (flow.needsDrain()) {
          waiting = drained$(flow, req.stallTimeoutMs, undefined, at).subscribe({ complete: more, error: (err: unknown) => sub.error(err) });
          return;
        }
      }
      sub.complete();
    };
    more();
    return () => waiting?.unsubscribe();
  });
}

/** Completes once the connection is below its high-water mark; errors STALLED if that takes longer than ms. */
function drained$(flow: WatchFlow, ms: number, delivered: number | undefined, current: number): Observable<never> {
  return defer(() =>
    !flow.needsDrain()
      ? EMPTY
      : race(
          from(flow.drained()),
          timer(ms).pipe(
            concatMap(() =>
              throwError(
                () =>
                  new WatchError(
                    'STALLED',
                    delivered,
                    current,
                    `the watcher did not read for ${Math.round(ms / 1000)}s while behind${delivered !== undefined ? `; resume from resourceVersion ${delivered}` : ''}`,
                  ),
              ),
            ),
          ),
        ).pipe(take(1), ignoreElements()),
  );
}

/** How far a watcher got: every version it has passed (matching or not), and whether it is taking live changes. */
interface Progress {
  through: number;
  live: boolean;
  /** Log entries a catch-up reads at a time, from the sizes seen (PAGE_BYTES worth). */
  pageEntries: number;
}

/** A step of the change stream: the changes under the prefix, and the version passed. */
interface Step {
  changes: Change[];
  through: number;
}

/**
 * Changes after `after` as this watcher's events, with bookmarks. The log is the buffer: while the
 * watcher is behind the view it reads committed pages from the log, one at a time as its connection
 * drains; once caught up it takes live changes, decided in the same tick as it subscribes, so no
 * batch falls between the two. Past its connection's bound it stops taking live changes and goes
 * back to the log, so nothing is queued in memory for it however far behind it falls.
 */
function follow$(store: WatchSource, req: WatchRequest, flow: WatchFlow, after: number): Observable<WatchEvent[]> {
  return defer(() => {
    const p: Progress = { through: after, live: false, pageEntries: 64 };
    const changes$ = defer(() => (p.through >= store.appliedSeq ? live$(store, req, flow, p) : catchUp$(store, req, flow, p))).pipe(
      // A segment ends when the watcher falls behind (live) or has read a page (catch-up); a closed
      // store ends the watch.
      repeat({ delay: () => (store.isClosed ? EMPTY : of(0)) }),
      stepEvents(p, req.matches),
    );
    if (req.bookmarkIntervalMs === undefined) return changes$;
    // A live watcher has been handed every committed change (delivery is synchronous with the commit).
    const progress = () => (p.live ? Math.max(store.appliedSeq, p.through) : p.through);
    return changes$.pipe(mergeWith(interval(req.bookmarkIntervalMs).pipe(map(() => [bookmark(progress())]))));
  });
}

/**
 * Each step as the watcher's events, the version it passed noted, steps with none for it dropped:
 * one operator where a tap, a map and a filter were three subscribers for every watcher to pass
 * every batch through (a broadcast to a thousand watchers spent most of its time in those hops).
 */
const stepEvents =
  (p: Progress, matches: WatchRequest['matches']) =>
  (steps: Observable<Step>): Observable<WatchEvent[]> =>
    new Observable<WatchEvent[]>((sub) =>
      steps.subscribe({
        next: (s) => {
          if (s.through > p.through) p.through = s.through;
          const events = eventsOf(s.changes, matches);
          if (events.length > 0) sub.next(events);
        },
        error: (err: unknown) => sub.error(err),
        complete: () => sub.complete(),
      }),
    );

/**
 * Live changes, until the connection is past its bound: the batch that finds it so is left to the
 * log. One subscriber, not a takeWhile and a map: a broadcast passes every batch through it for
 * every watcher. A batch all of whose changes are the watcher's (the usual case: its index bucket
 * holds only its namespace) is handed on as it came, so the watchers of one bucket share it.
 */
function live$(store: WatchSource, req: WatchRequest, flow: WatchFlow, p: Progress): Observable<Step> {
  p.live = true;
  return new Observable<Step>((sub) =>
    store.streams.live(req.collection, req.route).subscribe({
      next: (batch) => {
        if (flow.behind()) {
          p.live = false;
          p.through = Math.max(p.through, batch[0].seq - 1);
          return sub.complete();
        }
        // A version ahead of the view (a client's guess) is not an error for a watch, as in
        // Kubernetes' watch cache: changes up to it are skipped as they arrive.
        sub.next({ changes: allAfter(batch, p.through, req.keyPrefix) ? batch : batch.filter((c) => c.seq > p.through && c.key.startsWith(req.keyPrefix)), through: batch[batch.length - 1].seq });
      },
      error: (err: unknown) => sub.error(err),
      complete: () => sub.complete(),
    }),
  );
}

const allAfter = (batch: readonly Change[], through: number, prefix: string): boolean => {
  if (batch[0].seq <= through) return false;
  for (const c of batch) if (!c.key.startsWith(prefix)) return false;
  return true;
};

/**
 * One page of the log after p.through, once the connection has drained, in the store's catch-up
 * turn: the pages of every catching-up watcher are read and sent one at a time, between rounds of
 * live work, so replaying history cannot starve the live watchers' deliveries.
 */
function catchUp$(store: WatchSource, req: WatchRequest, flow: WatchFlow, p: Progress): Observable<Step> {
  p.live = false;
  return concat(drained$(flow, req.stallTimeoutMs, p.through, store.appliedSeq), store.streams.catchUpTurns.take(defer(() => readPage(store, req, p))));
}

async function readPage(store: WatchSource, req: WatchRequest, p: Progress): Promise<Step> {
  const after = p.through;
  const compacted = () => new WatchError('COMPACTED', after, store.oldestVersion, `version ${after} is compacted`);
  if (after + 1 < store.log.firstSeq) throw compacted();
  const to = Math.min(store.appliedSeq, after + p.pageEntries);
  const changes: Change[] = [];
  let bytes = 0;
  let n = 0;
  try {
    for await (const batch of store.log.read(after + 1, to)) {
      for (const e of batch) {
        n++;
        bytes += e instanceof StoredEntry ? e.end - e.start : 1024;
        if (e.key.startsWith(req.keyPrefix)) changes.push(await replayed(store, e, req.matches !== undefined));
      }
    }
  } catch (err) {
    // Overtaken by a compaction while it read.
    if ((err instanceof LogError || err instanceof StoreError) && err.code === 'COMPACTED') throw compacted();
    throw err;
  }
  if (n > 0) p.pageEntries = Math.max(16, Math.min(1000, Math.floor(PAGE_BYTES / (bytes / n))));
  return { changes, through: to };
}

/**
 * A log entry as a Change. Whether the key existed before comes from the key index; the previous
 * object is read from the log only when a selector needs it, so a catch-up holds its page and
 * nothing of the keys it passed.
 */
async function replayed(store: WatchSource, e: LogEntry, needPrev: boolean): Promise<Change> {
  const cur = storedOf(e, e.key, e.seq);
  const rev = store.view.revisionAt(e.key, e.seq - 1);
  const prev = rev !== undefined && needPrev ? await store.revision(e.key, rev) : undefined;
  const type: ChangeType = e.type === 'delete' ? 'DELETED' : rev !== undefined ? 'MODIFIED' : 'ADDED';
  return new Change(type, e.seq, e.key, cur, prev);
}

/**
 * Changes as one watcher's events. With a selector, Kubernetes' transitions: an object that starts
 * matching is ADDED, one that stops is DELETED (with its new state), one that never matched is not sent.
 * Without one, the events of a batch are made once for the watchers it is handed to one after
 * another (the same array, see live$), and they share the array: the encoder then finds the
 * batch's bytes made already (watch-stream.ts).
 */
function eventsOf(changes: Change[], matches: ((o: KubeObject) => boolean) | undefined): WatchEvent[] {
  if (!matches && changes === lastUnselected.changes) return lastUnselected.events;
  const events: WatchEvent[] = [];
  for (const c of changes) {
    const type = matches ? typeFor(c, matches) : c.type;
    if (type) events.push({ type, change: c });
  }
  if (!matches) lastUnselected = { changes, events };
  return events;
}

/** The last batch made into events for watchers without a selector (one batch reaches its watchers in a row). */
let lastUnselected: { changes: Change[]; events: WatchEvent[] } = { changes: [], events: [] };

function typeFor(c: Change, m: (o: KubeObject) => boolean): ChangeType | undefined {
  if (c.type === 'DELETED') return (c.prev ? m(c.prev.obj) : m(c.cur.obj)) ? 'DELETED' : undefined;
  const now = m(c.cur.obj);
  const before = c.prev !== undefined && m(c.prev.obj);
  if (now) return before ? 'MODIFIED' : 'ADDED';
  return before ? 'DELETED' : undefined;
}
