import { Subject } from 'rxjs';
import type { Observable } from 'rxjs';
import type { LogRecord, Relist } from '../log/log.js';
import type { CheckpointSchedule } from './checkpoint-schedule.js';
import type { CollectionStreams } from './fanout.js';
import { relistEntries, relistError } from './relist.js';
import type { Change } from './change.js';
import type { VersionClock } from './version-clock.js';
import type { View } from './view.js';
import type { Writer } from './writer.js';

export interface CommitsOptions {
  view: () => View;
  writer: Writer;
  streams: CollectionStreams;
  versionClock: VersionClock;
  checkpoints: CheckpointSchedule;
  now: () => number;
  /** The oldest version still readable: what a relist's watchers are told. */
  oldestVersion: () => number;
}

/**
 * What the log committed, folded into the view in order: each batch becomes changes for the
 * watchers and controllers, a hole a shared log passed moves the applied version, and a relist
 * (a replica that fell behind a compaction) moves the view to the state it was given.
 */
export class Commits {
  private readonly changesSubject = new Subject<Change[]>();
  /** Committed changes, in order, after the view applied them. */
  readonly changes$: Observable<Change[]> = this.changesSubject.asObservable();
  private readonly appliedSubject = new Subject<number>();
  /** The view's applied version, each time it moves (with changes or past a hole). */
  readonly applied$: Observable<number> = this.appliedSubject.asObservable();

  constructor(private readonly o: CommitsOptions) {}

  batch(batch: readonly { seq: number; key: string; type: LogRecord['type']; value: unknown }[]): void {
    const view = this.o.view();
    const changes: Change[] = [];
    for (const e of batch) {
      const change = view.apply(e);
      changes.push(change);
      this.o.writer.applied(change);
    }
    this.changesSubject.next(changes);
    this.o.streams.publish(changes);
    this.o.versionClock.note(view.appliedSeq, this.o.now());
    this.appliedSubject.next(view.appliedSeq);
    this.o.checkpoints.counted(batch.length);
  }

  /** A shared log saw everything through seq and none of it was this log's: the view is at seq. */
  progressed(seq: number): void {
    const view = this.o.view();
    if (seq <= view.appliedSeq) return;
    view.appliedSeq = seq;
    this.o.versionClock.note(seq, this.o.now());
    this.appliedSubject.next(seq);
  }

  /** The log lost history this replica had not applied: its watchers end with 410, the view moves to the state (relist.ts). */
  relisted(r: Relist): void {
    const view = this.o.view();
    this.o.streams.fail(relistError(view.appliedSeq, this.o.oldestVersion()));
    this.o.writer.relisted(r.seq);
    const entries = relistEntries(view, r);
    if (entries.length > 0) this.batch(entries);
    this.progressed(r.seq);
  }

  complete(): void {
    this.changesSubject.complete();
    this.appliedSubject.complete();
  }
}
