import { Observable } from 'rxjs';
import { LogError, type LogEntry } from '../log/log.js';
import type { KubeObject } from '../resources/types.js';
import { StoreError } from './errors.js';
import type { Store } from './store.js';
import type { Change, StoredObject } from './view.js';

export interface WatchFrom {
  /** Changes with seq > after are delivered. */
  after: number;
  /** Only keys starting with this prefix (a collection, or a namespace of one). */
  keyPrefix: string;
  /** Told every sequence the watch has passed, matching or not: bookmarks report it. */
  onProgress?: (seq: number) => void;
}

/**
 * Changes after a version, in order, with no gap and no duplicate: the log replays what is already
 * committed (the "unsynced" path), live changes continue it (the "synced" path). Live changes that
 * arrive while the replay reads the log are buffered and released after it, past the replay's end.
 */
export function changesAfter(store: Store, from: WatchFrom): Observable<Change> {
  return new Observable<Change>((sub) => {
    let live = false;
    let last = from.after;
    const buffered: Change[] = [];
    const deliver = (c: Change) => {
      if (c.seq <= last) return;
      last = c.seq;
      if (c.key.startsWith(from.keyPrefix)) sub.next(c);
      from.onProgress?.(c.seq);
    };
    const liveSub = store.changes$.subscribe({
      next: (batch) => {
        if (live) for (const c of batch) deliver(c);
        else buffered.push(...batch);
      },
      complete: () => sub.complete(),
    });
    const head = store.appliedSeq;
    if (from.after > head) {
      sub.error(new StoreError('FUTURE_SEQ', from.keyPrefix, `version ${from.after} is newer than ${head}`, from.after));
      return () => liveSub.unsubscribe();
    }
    let stopped = false;
    void (async () => {
      try {
        if (from.after < head) {
          if (from.after + 1 < store.log.firstSeq) throw new LogError('COMPACTED', `version ${from.after} is compacted`, from.after);
          const prevs = new Map<string, StoredObject | null>();
          for await (const batch of store.log.read(from.after + 1, head)) {
            if (stopped) return;
            for (const e of batch) {
              const c = await replayed(store, e, prevs);
              if (c) deliver(c);
            }
          }
        }
        live = true;
        for (const c of buffered.splice(0)) deliver(c);
        if (head > last) {
          last = head;
          from.onProgress?.(head);
        }
      } catch (err) {
        sub.error(err);
      }
    })();
    return () => {
      stopped = true;
      liveSub.unsubscribe();
    };
  });
}

/** A log entry as a Change, with the previous version found through the key index when needed. */
async function replayed(store: Store, e: LogEntry, prevs: Map<string, StoredObject | null>): Promise<Change | undefined> {
  let prev = prevs.get(e.key);
  if (prev === undefined) {
    const seq = store.keyIndex.before(e.key, e.seq);
    const p = seq !== undefined ? await store.log.get(seq) : undefined;
    prev = p && p.type === 'put' ? { key: p.key, seq: p.seq, obj: p.value as KubeObject } : null;
  }
  const cur: StoredObject = { key: e.key, seq: e.seq, obj: e.value as KubeObject };
  prevs.set(e.key, e.type === 'put' ? cur : null);
  if (e.type === 'delete') return prev ? { type: 'DELETED', seq: e.seq, key: e.key, cur, prev } : { type: 'DELETED', seq: e.seq, key: e.key, cur };
  return prev ? { type: 'MODIFIED', seq: e.seq, key: e.key, cur, prev } : { type: 'ADDED', seq: e.seq, key: e.key, cur };
}
