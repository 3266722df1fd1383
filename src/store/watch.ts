import { Observable } from 'rxjs';
import { LogError, type LogEntry } from '../log/log.js';
import type { KubeObject } from '../resources/types.js';
import type { Store } from './store.js';
import type { Change, StoredObject } from './view.js';

export interface WatchFrom {
  /** Changes with seq > after are delivered. A version the view has not reached yet is waited for. */
  after: number;
  /** Only keys starting with this prefix (a collection, or a namespace of one). */
  keyPrefix: string;
  /** Told every sequence the watch has passed, matching or not: bookmarks report it. */
  onProgress?: (seq: number) => void;
  /**
   * Asked between log pages while catching up; a promise holds the replay until it settles. This
   * is how a slow reader slows its own replay instead of having it queued in memory.
   */
  pace?: () => Promise<void> | undefined;
}

/**
 * Changes after a version, in order, with no gap and no duplicate. The log is the buffer: while
 * the watch is behind it reads committed pages from the log (the "unsynced" path), and only when
 * it has caught up with what the view applied does it switch to live changes, in the same tick as
 * the check, so no batch can fall between the two. Nothing is queued in memory for a watcher that
 * is catching up, however long the catch-up takes.
 */
export function changesAfter(store: Store, from: WatchFrom): Observable<Change> {
  return new Observable<Change>((sub) => {
    let last = from.after;
    let stopped = false;
    let liveSub: { unsubscribe(): void } | undefined;
    const deliver = (c: Change) => {
      if (c.seq <= last) return;
      last = c.seq;
      if (c.key.startsWith(from.keyPrefix)) sub.next(c);
      from.onProgress?.(c.seq);
    };
    const goLive = () => {
      liveSub = store.changes$.subscribe({
        next: (batch) => {
          for (const c of batch) deliver(c);
        },
        complete: () => sub.complete(),
      });
    };

    // A version ahead of the view (a list served by a fresher replica, or a client's guess) is not an
    // error for a watch, as in Kubernetes' watch cache: changes up to it are skipped as they arrive.
    if (from.after >= store.appliedSeq) {
      goLive();
    } else {
      void (async () => {
        try {
          const prevs = new Map<string, StoredObject | null>();
          while (!stopped) {
            const head = store.appliedSeq;
            if (last >= head) {
              prevs.clear();
              goLive();
              return;
            }
            if (last + 1 < store.log.firstSeq) throw new LogError('COMPACTED', `version ${last} is compacted`, last);
            for await (const batch of store.log.read(last + 1, head)) {
              if (stopped) return;
              for (const e of batch) {
                if (e.seq <= last) continue;
                if (!e.key.startsWith(from.keyPrefix)) {
                  last = e.seq;
                  from.onProgress?.(e.seq);
                  continue;
                }
                const c = await replayed(store, e, prevs);
                if (stopped) return;
                deliver(c);
              }
              const wait = from.pace?.();
              if (wait) await wait;
              if (stopped) return;
            }
            // The replay read up to head; anything the view applied since is read on the next turn.
            if (last < head) {
              last = head;
              from.onProgress?.(head);
            }
          }
        } catch (err) {
          if (!stopped) sub.error(err);
        }
      })();
    }
    return () => {
      stopped = true;
      liveSub?.unsubscribe();
    };
  });
}

/** A log entry as a Change, with the previous version found through the key index when needed. */
async function replayed(store: Store, e: LogEntry, prevs: Map<string, StoredObject | null>): Promise<Change> {
  let prev = prevs.get(e.key);
  if (prev === undefined) {
    const seq = store.view.revisionAt(e.key, e.seq - 1);
    const p = seq !== undefined ? await store.log.get(seq) : undefined;
    prev = p && p.type === 'put' ? { key: p.key, seq: p.seq, obj: p.value as KubeObject } : null;
  }
  const cur: StoredObject = { key: e.key, seq: e.seq, obj: e.value as KubeObject };
  prevs.set(e.key, e.type === 'put' ? cur : null);
  if (e.type === 'delete') return prev ? { type: 'DELETED', seq: e.seq, key: e.key, cur, prev } : { type: 'DELETED', seq: e.seq, key: e.key, cur };
  return prev ? { type: 'MODIFIED', seq: e.seq, key: e.key, cur, prev } : { type: 'ADDED', seq: e.seq, key: e.key, cur };
}
