import { AsyncResource } from 'node:async_hooks';
import type { Log, LogEntry, Relist } from '../log/log.js';
import { entriesAt } from '../log/entries-at.js';
import { decodeCheckpoint } from './checkpoint-format.js';
import { LogObjects, type ReadEntries } from './checkpoint-objects.js';
import type { Commits } from './commits.js';
import { View } from './view.js';

export interface Recovered {
  view: View;
  /** The version of the checkpoint the view started from (0: none). */
  checkpointSeq: number;
  /** How many log entries were replayed on top of it. */
  replayed: number;
  /** Hands what the log committed during the replay to commits, and everything after it as it comes. */
  goLive(): void;
  /**
   * Reads, in one pass, the objects of the checkpoint along the log the view started from that no
   * part has read yet (see LogObjects): undefined when the view holds every object already.
   */
  readUnread?(stopped: () => boolean): Promise<void>;
}

/**
 * The view rebuilt from the last checkpoint and the log's tail. The log is followed from before the
 * replay: on a shared log, other replicas' writes come in while it runs, and are applied after it.
 */
export async function recover(log: Log, commits: Commits, onReplayProgress?: (applied: number, total: number) => void): Promise<Recovered> {
  const cp = await log.loadCheckpoint();
  // One older than the compaction horizon is never read: the log below the horizon is gone.
  // An index-only checkpoint (the newest whole one lost) takes its objects from the log by revision:
  // each part's when first used where the log reads an entry at once, the rest in one pass in seq
  // order after the start (readUnread); else all in that pass now. The horizon check above is what
  // keeps them there: compaction keeps each key's state at the horizon.
  const pass: ReadEntries = (seqs, keyOf) => entriesAt(log, seqs, keyOf);
  const fromLog = new LogObjects(log.entrySync);
  const fromCheckpoint = cp && cp.seq >= log.firstSeq - 1 ? await decodeCheckpoint(cp, pass, fromLog) : undefined;
  const view = fromCheckpoint ?? new View();
  const early: (LogEntry[] | Relist | number)[] = [];
  let live = false;
  // Bound here, once: a commit otherwise runs in the async context of whichever request's append
  // scheduled the group commit, and every view, watcher and controller would inherit its span.
  log.committed$.subscribe(AsyncResource.bind((batch: LogEntry[]) => (live ? commits.batch(batch) : early.push(batch))));
  log.relisted$?.subscribe(AsyncResource.bind((r: Relist) => (live ? commits.relisted(r) : early.push(r))));
  log.progress$?.subscribe(AsyncResource.bind((seq: number) => (live ? commits.progressed(seq) : early.push(seq))));
  const to = log.lastSeq;
  // An upper bound on a shared log, whose seqs have holes.
  const total = to - view.appliedSeq;
  let replayed = 0;
  if (total > 0) {
    view.beginReplay();
    // kept: without a usable checkpoint, a compacted log still holds each key's state at its horizon.
    for await (const batch of log.read(view.appliedSeq + 1, to, { kept: true })) {
      for (const e of batch) view.apply(e);
      replayed += batch.length;
      onReplayProgress?.(replayed, total);
    }
    view.endReplay();
    // Everything through `to` is in the view, also when its last seqs were holes.
    view.appliedSeq = Math.max(view.appliedSeq, to);
    // Memory, not state: objects left alone on mostly replaced pages get bytes of their own before
    // ready (two walks of every slot, a few hundred ms at a million keys). Done after ready, the copies
    // landed on the first requests' memory (a streaming list of 100k objects then grew the server by
    // 80 MiB instead of 13).
    await view.releaseBuffers();
  }
  return {
    view,
    checkpointSeq: fromCheckpoint ? cp!.seq : 0,
    replayed,
    ...(fromCheckpoint && fromLog.onUse && fromLog.size > 0 ? { readUnread: (stopped: () => boolean) => fromLog.readUnread(pass, stopped) } : {}),
    goLive() {
      for (const b of early) {
        if (typeof b === 'number') commits.progressed(b);
        else if (!Array.isArray(b)) commits.relisted(b);
        else {
          const rest = b.filter((e) => e.seq > view.appliedSeq);
          if (rest.length > 0) commits.batch(rest);
        }
      }
      live = true;
    },
  };
}
