/**
 * A replica of a shared log (etcd) that fell behind a compaction: the log lists the current state
 * instead of the history it missed (Log.relisted$). As kube-apiserver's watch cache does when etcd
 * answers ErrCompacted, every watcher of this replica ends with 410 Expired, so its client relists
 * (and a watch from a version before the state answers 410 too: the log's horizon moved past it).
 * The view moves to the state through entries the store applies like any others, so whatever follows
 * its changes (controllers, caches) sees each key that changed once, in its current state, and each
 * key that went as a delete at the state's seq, as an informer's relist would show them.
 */
import type { LogEntry, Relist } from '../log/log.js';
import type { View } from './view.js';
import { WatchError } from './watch.js';

/** Why every watcher of the replica ends: the versions between what it applied and the state are gone. */
export const relistError = (applied: number, oldest: number): WatchError =>
  new WatchError('COMPACTED', applied, oldest, `this server fell behind a compaction at version ${oldest}: watch again from a fresh list`);

/** The entries that bring view to the state of r: newer versions, in order, then deletes of the keys it no longer holds. */
export function relistEntries(view: View, r: Relist): LogEntry[] {
  const out: LogEntry[] = [];
  const present = new Set<string>();
  for (const e of r.entries) {
    // A delete here is a value that does not open (encryption at rest): the key reads as corrupt.
    if (e.type !== 'put') continue;
    present.add(e.key);
    if (e.seq > view.appliedSeq) out.push(e);
  }
  for (const s of view.objects()) if (!present.has(s.key)) out.push({ seq: r.seq, type: 'delete', key: s.key, value: s.obj });
  return out;
}
