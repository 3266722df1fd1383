import { filter, take, timeout } from 'rxjs';
import type { Observable } from 'rxjs';
import { LogError, type Log, type Author } from '../log/log.js';
import { corruptObjectsOf, type CorruptObject } from '../log/encryption/index.js';
import type { KubeObject } from '../api/types.js';
import { CheckpointSchedule } from './checkpoint-schedule.js';
import { Commits } from './commits.js';
import { CompactionRunner, type Compaction } from './compaction.js';
import { CollectionStreams } from './fanout.js';
import { StoreError } from './errors.js';
import type { Expected } from './preconditions.js';
import { getAt, namespacesOf } from './list.js';
import { recover } from './recovery.js';
import type { HistorySource, WatchSource } from './sources.js';
import type { Change } from './change.js';
import { storedOf, type StoredObject } from './stored-object.js';
import { VersionClock } from './version-clock.js';
import { View } from './view.js';
import { Writer, type KeyState, type UpdateResult } from './writer.js';

export type { Compaction } from './compaction.js';
export type { UpdateResult } from './writer.js';

export interface StoreOptions {
  log: Log;
  /** Save a checkpoint after this many applied entries (restart then replays only the tail). */
  checkpointEvery?: number;
  /** Told how far a startup replay got: (applied, total). */
  onReplayProgress?: (applied: number, total: number) => void;
  /** The clock that dates versions for age-based history retention (tests move it). */
  now?: () => number;
  /** Who is writing now (the request's user, verb, field manager): kept with each entry. */
  writerOf?: () => Author | undefined;
}

/**
 * The store: the door every room reads and writes objects through. It puts together the view
 * (view.ts) rebuilt at start (recovery.ts) and fed by what the log commits (commits.ts), the writer
 * (writer.ts), checkpoints (checkpoint-schedule.ts, checkpoint-format.ts) and compaction (compaction.ts). Reads see only
 * committed (durable) state.
 */
/**
 * What a room that reads the store and never writes it (admission, auth: design.md's "store (read
 * only)") is given: the newest objects and the committed changes. test/layout checks that those rooms
 * name this and not Store.
 */
export type StoreReads = Pick<Store, 'get' | 'list' | 'changes$'>;

export class Store implements WatchSource, HistorySource {
  readonly log: Log;
  /** The materialized view; read-only outside the store. */
  view = new View();
  /** Committed changes per collection, and the live watchers of each, indexed (see CollectionStreams). */
  readonly streams = new CollectionStreams();
  /** When versions were applied (age-based retention). */
  readonly versionClock = new VersionClock();
  readonly now: () => number;
  /** Settles when the reset under way (reset.ts) is done; undefined when none is. */
  resetting: Promise<void> | undefined;
  private readonly writer: Writer;
  private readonly commits: Commits;
  private readonly checkpoints: CheckpointSchedule;
  private readonly compactions_: CompactionRunner;
  private closed = false;
  /** True from the first step of close(): the read of a checkpoint's unread objects stops. */
  private closing = false;

  constructor(private readonly opts: StoreOptions) {
    this.log = opts.log;
    this.now = opts.now ?? Date.now;
    this.writer = new Writer(this.log, (key) => this.view.get(key), opts.writerOf);
    this.checkpoints = new CheckpointSchedule(
      this.log,
      () => this.view,
      (key, rev) => this.revision(key, rev),
      opts.checkpointEvery ?? 100_000,
    );
    this.compactions_ = new CompactionRunner(this.log, () => this.view, this.checkpoints);
    this.commits = new Commits({
      view: () => this.view,
      writer: this.writer,
      streams: this.streams,
      versionClock: this.versionClock,
      checkpoints: this.checkpoints,
      now: this.now,
      oldestVersion: () => this.oldestVersion,
    });
  }

  /** Committed changes, in order, after the view applied them. */
  get changes$(): Observable<Change[]> {
    return this.commits.changes$;
  }

  /**
   * The oldest version reads can be served at. Compaction keeps each key's state at firstSeq - 1,
   * so that version is whole; anything older answers COMPACTED.
   */
  get oldestVersion(): number {
    return this.log.firstSeq - 1;
  }

  /** True once close() has begun: watches end instead of waiting for more changes. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Newest version the view has applied: a list's resourceVersion. */
  get appliedSeq(): number {
    return this.view.appliedSeq;
  }

  /** The last compaction (undefined before the first). */
  get lastCompaction(): Compaction | undefined {
    return this.compactions_.last;
  }

  get compactions(): number {
    return this.compactions_.count;
  }

  /** Settles once the compactions asked for so far are over. */
  get compactionsIdle(): Promise<void> {
    return this.compactions_.idle;
  }

  /** How the last start rebuilt the view: the checkpoint's version (0: none) and the log entries folded on top. */
  startedFrom = { checkpointSeq: 0, replayed: 0 };

  /** Rebuild the view from the last checkpoint and the log's tail, then follow the log live. */
  async start(): Promise<void> {
    const r = await recover(this.log, this.commits, this.opts.onReplayProgress);
    this.view = r.view;
    this.startedFrom = { checkpointSeq: r.checkpointSeq, replayed: r.replayed };
    this.checkpoints.savedSeq = r.checkpointSeq;
    this.checkpoints.counted(r.replayed);
    this.versionClock.note(this.view.appliedSeq, this.now());
    r.goLive();
    // After ready: reads and writes meanwhile read the parts they touch themselves.
    if (r.readUnread) {
      this.checkpoints.unread = r
        .readUnread(() => this.closing)
        .catch(() => undefined)
        .finally(() => (this.checkpoints.unread = undefined));
    }
  }

  /** Settles once the objects the start's checkpoint along the log named are all read; undefined once they are. */
  get unread(): Promise<void> | undefined {
    return this.checkpoints.unread;
  }

  /** On a log shared with other replicas, the newest seq any of them wrote (a quorum read); else undefined. */
  headSeq(): Promise<number | undefined> {
    return this.log.headSeq ? this.log.headSeq() : Promise.resolve(undefined);
  }

  /** Resolves once the view has applied seq, or with false after ms (a read newer than the view). */
  waitFor(seq: number, ms: number): Promise<boolean> {
    if (this.view.appliedSeq >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      this.commits.applied$
        .pipe(
          filter((at) => at >= seq),
          take(1),
          timeout(ms),
        )
        .subscribe({ next: () => resolve(true), error: () => resolve(false), complete: () => resolve(this.view.appliedSeq >= seq) });
    });
  }

  /** Saves the view as of now; the next start replays only what comes after. */
  checkpoint(): Promise<void> {
    return this.checkpoints.save();
  }

  /** Drops the log's history below `below`, one compaction at a time (compaction.ts). */
  compact(below: number): Promise<Compaction> {
    return this.compactions_.run(below);
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.checkpoints.unread;
    await this.compactions_.idle;
    await this.checkpoints.idle;
    this.closed = true;
    this.commits.complete();
    this.streams.complete();
  }

  /** The object a key held at revision rev, read from the log; COMPACTED when the log no longer has it. */
  async revision(key: string, rev: number): Promise<StoredObject> {
    return (await this.revisionEntry(key, rev)).stored;
  }

  /** revision(), with when the entry committed and who wrote it (when the log kept them, and opened them). */
  async revisionEntry(key: string, rev: number): Promise<{ stored: StoredObject; time?: number; writer?: Author }> {
    const compacted = () => new StoreError('COMPACTED', key, `revision ${rev} of ${key} is compacted`, rev);
    const e = await this.log.get(rev, key).catch((err: unknown) => {
      throw err instanceof LogError && err.code === 'COMPACTED' ? compacted() : err;
    });
    if (!e) throw compacted();
    // Still bytes when the log gave them: an Exact list then encodes them without building the object.
    const writer = e.writer instanceof Uint8Array ? undefined : e.writer;
    return { stored: storedOf(e, key, rev), ...(e.time !== undefined ? { time: e.time } : {}), ...(writer ? { writer } : {}) };
  }

  /** Committed state of one key. */
  get(key: string): StoredObject | undefined {
    return this.view.get(key);
  }

  /** The state key had at version seq: FUTURE_SEQ past the view, COMPACTED below the horizon. */
  getAt(key: string, seq: number): Promise<StoredObject | undefined> {
    return getAt(this, key, seq);
  }

  /** The stored state of key when it cannot be read (encryption at rest: no provider opens it). */
  corrupt(key: string): CorruptObject | undefined {
    return corruptObjectsOf(this.log)?.get(key);
  }

  /** The keys of a collection (under a namespace prefix) whose stored state cannot be read. */
  *corruptUnder(collection: string, prefix = ''): IterableIterator<[string, CorruptObject]> {
    const corrupt = corruptObjectsOf(this.log);
    if (corrupt && corrupt.size > 0) yield* corrupt.under(collection, prefix);
  }

  /**
   * Removes key from storage whatever its stored state, unsafely: a delete record carrying obj
   * (what is known of the object, its identity), stamped with the record's version, so that
   * watchers see it go. For objects that cannot be read, which no precondition can be checked on.
   */
  removeUnreadable(key: string, obj: KubeObject): Promise<void> {
    return this.writer.removeUnreadable(key, obj);
  }

  /** Committed objects of a collection (optionally one namespace prefix 'ns/'), in key order, after a key. */
  list(collection: string, prefix = '', after?: string): IterableIterator<StoredObject> {
    return this.view.list(collection, prefix, after);
  }

  /** The namespaces holding objects of a collection, each once. */
  namespaces(collection: string): IterableIterator<string> {
    return namespacesOf(this.view, collection);
  }

  /** Names of the collections that hold objects. */
  collections(): IterableIterator<string> {
    return this.view.collections.keys();
  }

  /** The newest state of key including appended-but-not-yet-durable writes: what preconditions check. */
  latest(key: string): KeyState | undefined {
    return this.writer.latest(key);
  }

  /** Appends a put if key is in the expected state; resolves with the committed version once durable (with the JSON its watchers got: the view applied it first). */
  put(key: string, obj: KubeObject, expected: Expected): Promise<StoredObject> {
    return this.writer.put(key, obj, expected);
  }

  /** Appends a delete if key is in the expected state; the record carries obj as the last state. */
  remove(key: string, obj: KubeObject, expected: Expected): Promise<StoredObject> {
    return this.writer.remove(key, obj, expected);
  }

  /** Read-modify-write (Kubernetes' GuaranteedUpdate: writer.ts). */
  update(key: string, fn: (cur: KeyState | undefined) => Promise<UpdateResult> | UpdateResult, maxTries?: number): Promise<{ stored: StoredObject | undefined; result: UpdateResult }> {
    return this.writer.update(key, fn, maxTries);
  }
}
