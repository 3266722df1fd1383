/**
 * What the store's readers read, each as narrow as it needs: list.ts, watch.ts and versions.ts take
 * these rather than the Store (which builds on them, so they may not import it back).
 */
import type { Log } from '../log/log.js';
import type { CollectionStreams } from './fanout.js';
import type { StoredObject } from './stored-object.js';
import type { View } from './view.js';

/** A read of the current state or of a past version: the view, how far it has applied, how far back history goes. */
export interface VersionedView {
  readonly view: View;
  /** Newest version the view has applied. */
  readonly appliedSeq: number;
  /** The oldest version reads can be served at. */
  readonly oldestVersion: number;
  get(key: string): StoredObject | undefined;
  /** The object a key held at revision rev, read from the log; COMPACTED when the log no longer has it. */
  revision(key: string, rev: number): Promise<StoredObject>;
  /** Settles once every object of the checkpoint along the log the store started from is read (recovery.ts); undefined once it is. */
  readonly unread?: Promise<void> | undefined;
}

/** What the watch engine follows: the live changes, the log to catch up from, and when the store closes. */
export interface WatchSource extends VersionedView {
  readonly log: Pick<Log, 'firstSeq' | 'read'>;
  readonly streams: CollectionStreams;
  readonly isClosed: boolean;
  /** Settles when the reset under way is done; undefined when none is. */
  readonly resetting: Promise<void> | undefined;
  waitFor(seq: number, ms: number): Promise<boolean>;
}

/** What reads of a key's whole history use: the versions and the log entries themselves. */
export interface HistorySource extends VersionedView {
  readonly log: Pick<Log, 'get'>;
}
