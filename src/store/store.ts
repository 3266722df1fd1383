import { AsyncResource } from 'node:async_hooks';
import { Subject, type Observable } from 'rxjs';
import { LogError, type Log, type LogEntry, type LogRecord, type Relist, type Writer } from '../log/log.js';
import { corruptObjectsOf, type CorruptObject } from '../log/encryption/index.js';
import type { KubeObject } from '../resources/types.js';
import { decodeCheckpoint, encodeCheckpoint } from './checkpoint.js';
import { CollectionStreams } from './fanout.js';
import { StoreError } from './errors.js';
import { CATCH_UP_MS, checkExpected, MAX_TRIES, wroteFirst, type Expected } from './preconditions.js';
import { getAt, namespacesOf } from './list.js';
import { relistEntries, relistError } from './relist.js';
import { VersionClock } from './version-clock.js';
import { failSpan, tracer } from '../observability/spans.js';
import { stageLap, stageStart } from '../observability/stage-timing.js';
import { storedOf, View, type Change, type StoredObject } from './view.js';

export interface StoreOptions {
  log: Log;
  /** Save a checkpoint after this many applied entries (restart then replays only the tail). */
  checkpointEvery?: number;
  /** Told how far a startup replay got: (applied, total). */
  onReplayProgress?: (applied: number, total: number) => void;
  /** The clock that dates versions for age-based history retention (tests move it). */
  now?: () => number;
  writerOf?: () => Writer | undefined; // who is writing now (the request's user, field manager, verb): kept with each entry
}

/** What one compaction did, for metrics and logs. */
export interface Compaction {
  /** The horizon after it: versions below horizon - 1 are gone. */
  horizon: number;
  /** Log entries below the horizon kept as their key's state at the horizon. */
  kept: number;
  ms: number;
}

/**
 * The store: preconditions checked against the newest state, appends to the log, and the views the
 * committed entries fold into. Reads see only committed (durable) state. Writes check against
 * committed + pending, synchronously with the append, so two writers can never both win.
 */
export class Store {
  readonly log: Log;
  /** The materialized view; read-only outside the store. */
  view = new View();
  /** Appended but not yet committed: key → its newest pending version (null = pending delete). */
  private readonly pending = new Map<string, { seq: number; obj: KubeObject | null }>();
  private readonly changesSubject = new Subject<Change[]>();
  /** Committed changes, in order, after the view applied them. */
  readonly changes$: Observable<Change[]> = this.changesSubject.asObservable();
  /** Committed changes per collection, and the live watchers of each, indexed (see CollectionStreams). */
  readonly streams = new CollectionStreams();
  private closed = false;
  private readonly checkpointEvery: number;
  private sinceCheckpoint = 0;
  private checkpointing: Promise<void> | undefined;
  /** The version of the newest saved checkpoint (0: none): compaction may not pass it. */
  private checkpointSeq = 0;
  private compacting: Promise<Compaction> | undefined;
  /** When versions were applied (age-based retention). */
  readonly versionClock = new VersionClock();
  readonly now: () => number;
  /** The last compaction (undefined before the first). */
  lastCompaction: Compaction | undefined;
  compactions = 0;

  constructor(private readonly opts: StoreOptions) {
    this.log = opts.log;
    this.checkpointEvery = opts.checkpointEvery ?? 100_000;
    this.now = opts.now ?? Date.now;
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

  /** Rebuild the view from the last checkpoint and the log's tail, then follow the log live. */
  async start(): Promise<void> {
    const cp = await this.log.loadCheckpoint();
    // One older than the compaction horizon is never read: the log below the horizon is gone.
    const fromCheckpoint = cp && cp.seq >= this.log.firstSeq - 1 ? await decodeCheckpoint(cp) : undefined;
    if (fromCheckpoint) {
      this.view = fromCheckpoint;
      this.checkpointSeq = cp!.seq;
    }
    // Subscribed before the replay: on a shared log, other replicas' writes come in while it runs.
    const early: (LogEntry[] | Relist)[] = [];
    let live = false;
    // Bound here, once: a commit otherwise runs in the async context of whichever request's append
    // scheduled the group commit, and every view, watcher and controller would inherit its span.
    this.log.committed$.subscribe(AsyncResource.bind((batch: LogEntry[]) => (live ? this.onCommitted(batch) : early.push(batch))));
    this.log.relisted$?.subscribe(AsyncResource.bind((r: Relist) => (live ? this.onRelisted(r) : early.push(r))));
    const total = this.log.lastSeq - this.view.appliedSeq;
    let applied = 0;
    if (total > 0) {
      this.view.beginReplay();
      // kept: without a usable checkpoint, a compacted log still holds each key's state at its horizon.
      for await (const batch of this.log.read(this.view.appliedSeq + 1, undefined, { kept: true })) {
        for (const e of batch) this.view.apply(e);
        applied += batch.length;
        this.opts.onReplayProgress?.(applied, total);
      }
      this.view.endReplay();
      // Memory, not state: objects left alone on mostly replaced pages get bytes of their own before
      // ready (two walks of every slot, a few hundred ms at a million keys). Done after ready, the copies
      // landed on the first requests' memory (a streaming list of 100k objects then grew the server by
      // 80 MiB instead of 13).
      await this.view.releaseBuffers();
    }
    this.sinceCheckpoint = applied;
    this.versionClock.note(this.view.appliedSeq, this.now());
    for (const b of early) {
      const rest = Array.isArray(b) ? b.filter((e) => e.seq > this.view.appliedSeq) : (this.onRelisted(b), []);
      if (rest.length > 0) this.onCommitted(rest);
    }
    live = true;
  }

  private onCommitted(batch: readonly { seq: number; key: string; type: LogRecord['type']; value: unknown }[]): void {
    const changes: Change[] = [];
    for (const e of batch) {
      changes.push(this.view.apply(e));
      const p = this.pending.get(e.key);
      if (p && p.seq === e.seq) this.pending.delete(e.key);
    }
    this.changesSubject.next(changes);
    this.streams.publish(changes);
    this.versionClock.note(this.view.appliedSeq, this.now());
    this.sinceCheckpoint += batch.length;
    if (this.sinceCheckpoint >= this.checkpointEvery && !this.checkpointing) void this.checkpoint();
  }

  /** The log lost history this replica had not applied: its watchers end with 410, the view moves to the state (relist.ts). */
  private onRelisted(r: Relist): void {
    this.streams.fail(relistError(this.view.appliedSeq, this.oldestVersion));
    for (const [key, p] of this.pending) if (p.seq <= r.seq) this.pending.delete(key);
    const entries = relistEntries(this.view, r);
    if (entries.length > 0) this.onCommitted(entries);
  }

  /** On a log shared with other replicas, the newest seq any of them wrote (a quorum read); else undefined. */
  headSeq(): Promise<number | undefined> {
    return this.log.headSeq ? this.log.headSeq() : Promise.resolve(undefined);
  }

  /** Resolves once the view has applied seq, or with false after ms (a read newer than the view). */
  waitFor(seq: number, ms: number): Promise<boolean> {
    if (this.view.appliedSeq >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        sub.unsubscribe();
        resolve(false);
      }, ms);
      const sub = this.changes$.subscribe(() => {
        if (this.view.appliedSeq < seq) return;
        clearTimeout(timer);
        sub.unsubscribe();
        resolve(true);
      });
    });
  }

  /** Saves the view as of now; the next start replays only what comes after. */
  async checkpoint(): Promise<void> {
    if (this.checkpointing) return this.checkpointing;
    this.sinceCheckpoint = 0;
    this.checkpointing = (async () => {
      // Between checkpoints, writes leave pages and parts that objects were read from mostly dead.
      await this.view.releaseBuffers();
      const cp = encodeCheckpoint(this.view, (key, rev) => this.revision(key, rev));
      await this.log.saveCheckpoint(cp);
      this.checkpointSeq = cp.seq;
    })().finally(() => (this.checkpointing = undefined));
    return this.checkpointing;
  }

  /**
   * Drops the log's history below `below` (capped so that a checkpoint at or past the horizon
   * exists: a restart rebuilds the view from it, since the log below is gone). Each key keeps its
   * newest revision below the horizon, so every version from the horizon - 1 on stays readable and
   * the current state is never lost. Runs one at a time; writes and reads go on meanwhile (the log
   * deletes in small steps), and reads that a compaction overtakes answer COMPACTED.
   */
  compact(below: number): Promise<Compaction> {
    const run = (this.compacting ?? Promise.resolve(undefined)).catch(() => undefined).then(() => this.compactNow(below));
    this.compacting = run;
    return run.finally(() => {
      if (this.compacting === run) this.compacting = undefined;
    });
  }

  private async compactNow(below: number): Promise<Compaction> {
    const started = performance.now();
    if (below > this.log.firstSeq) {
      // A fresh checkpoint, not one already on its way from an older version.
      if (this.checkpointing) await this.checkpointing;
      await this.checkpoint();
    }
    const h = Math.min(below, this.checkpointSeq + 1, this.view.appliedSeq + 1);
    let kept = 0;
    if (h > this.log.firstSeq) {
      const keep = this.view.keptAt(h);
      kept = keep.size;
      await this.log.compact(h, (seq) => keep.has(seq));
      // After the log moved its horizon: until then, reads below it still used these revisions.
      this.view.compactIndex(h);
      this.compactions++;
    }
    const done: Compaction = { horizon: this.log.firstSeq, kept, ms: performance.now() - started };
    this.lastCompaction = done;
    return done;
  }

  async close(): Promise<void> {
    await this.compacting?.catch(() => undefined);
    await this.checkpointing;
    this.closed = true;
    this.changesSubject.complete();
    this.streams.complete();
  }

  /** The object a key held at revision rev, read from the log; COMPACTED when the log no longer has it. */
  async revision(key: string, rev: number): Promise<StoredObject> {
    const compacted = () => new StoreError('COMPACTED', key, `revision ${rev} of ${key} is compacted`, rev);
    const e = await this.log.get(rev).catch((err: unknown) => {
      throw err instanceof LogError && err.code === 'COMPACTED' ? compacted() : err;
    });
    if (!e) throw compacted();
    // Still bytes when the log gave them: an Exact list then encodes them without building the object.
    return storedOf(e, key, rev);
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
  async removeUnreadable(key: string, obj: KubeObject): Promise<void> {
    const { durable } = this.log.append((seq) => {
      obj.metadata.resourceVersion = String(seq);
      return { type: 'delete', key, value: obj, writer: this.opts.writerOf?.() };
    });
    await durable;
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
  latest(key: string): { seq: number; obj: KubeObject } | undefined {
    const p = this.pending.get(key);
    if (p) return p.obj ? { seq: p.seq, obj: p.obj } : undefined;
    const c = this.view.get(key);
    return c ? { seq: c.seq, obj: c.obj } : undefined;
  }

  /** Appends a put if key is in the expected state; resolves with the committed version once durable (with the JSON its watchers got: the view applied it first). */
  put(key: string, obj: KubeObject, expected: Expected): Promise<StoredObject> {
    return this.retrying(() => this.write(key, 'put', obj, expected));
  }

  /** Appends a delete if key is in the expected state; the record carries obj as the last state. */
  remove(key: string, obj: KubeObject, expected: Expected): Promise<StoredObject> {
    return this.retrying(() => this.write(key, 'delete', obj, expected));
  }

  /**
   * On a log shared with other replicas (etcd) another one may have written first: the key moved
   * (CONFLICT) or it took the seq (RACED). This replica then catches up to what was written and
   * decides again, so the answer is the one a single server would give (409 if the key moved).
   */
  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (err) {
        if (!wroteFirst(err) || tries >= MAX_TRIES) throw err;
        await this.waitFor(err.seq ?? 0, CATCH_UP_MS);
      }
    }
  }

  /** One checked append: the check and the append in one synchronous step. */
  private write(key: string, type: LogRecord['type'], obj: KubeObject, expected: Expected): Promise<StoredObject> {
    const cur = checkExpected(key, this.latest(key), expected);
    return this.append(key, type, obj, cur?.seq ?? 0);
  }

  /** expect: the seq of the key's state this write was decided on (0: none), for a shared log to check. */
  private append(key: string, type: LogRecord['type'], obj: KubeObject, expect: number): Promise<StoredObject> {
    // A child of the request's span (the active context), ending when the batch is durable: the
    // group commit's wait shows in the trace.
    const span = tracer().startSpan('log.append', { attributes: { 'orchd.log.key': key, 'orchd.log.record': type } });
    const t = stageStart();
    const { seq, durable } = this.log.append((s) => {
      obj.metadata.resourceVersion = String(s);
      return { type, key, value: obj, expect, writer: this.opts.writerOf?.() };
    });
    const appended = stageLap('encode', t);
    span.setAttribute('orchd.log.seq', seq);
    this.pending.set(key, { seq, obj: type === 'put' ? obj : null });
    return durable.then(
      () => {
        stageLap('append', appended);
        span.end();
        const held = this.view.get(key);
        return held?.seq === seq && held.json ? { key, seq, obj, json: held.json } : { key, seq, obj };
      },
      (err: unknown) => {
        if (this.pending.get(key)?.seq === seq) this.pending.delete(key);
        failSpan(span, err);
        span.end();
        throw err;
      },
    );
  }

  /**
   * Read-modify-write (Kubernetes' GuaranteedUpdate): fn sees the newest state and returns what to
   * write (or null to delete, or the same object to do nothing); if another write lands while fn
   * runs (it may await admission), fn runs again on the new state.
   */
  async update(
    key: string,
    fn: (cur: { seq: number; obj: KubeObject } | undefined) => Promise<UpdateResult> | UpdateResult,
    maxTries = MAX_TRIES,
  ): Promise<{ stored: StoredObject | undefined; result: UpdateResult }> {
    for (let attempt = 0; attempt < maxTries; attempt++) {
      const cur = this.latest(key);
      const result = await fn(cur);
      const now = this.latest(key);
      if (now?.seq !== cur?.seq) continue;
      try {
        switch (result.kind) {
          case 'noop':
            return { stored: cur ? this.get(key) ?? { key, seq: cur.seq, obj: cur.obj } : undefined, result };
          case 'put':
            return { stored: await this.write(key, 'put', result.obj, cur ? { seq: cur.seq } : 'absent'), result };
          case 'delete':
            if (!cur) throw new StoreError('NOT_FOUND', key, `key ${key} not found`);
            return { stored: await this.write(key, 'delete', result.obj, { seq: cur.seq }), result };
        }
      } catch (err) {
        // Another replica wrote first: fn runs again on what it wrote.
        if (!wroteFirst(err)) throw err;
        await this.waitFor(err.seq ?? 0, CATCH_UP_MS);
      }
    }
    throw new StoreError('TOO_MANY_RETRIES', key, `too many concurrent writes to ${key}`);
  }
}

export type UpdateResult = { kind: 'put'; obj: KubeObject } | { kind: 'delete'; obj: KubeObject } | { kind: 'noop' };
