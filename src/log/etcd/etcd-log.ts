import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { noop as noRetry } from 'cockatiel';
import { CompareResult, CompareTarget, Etcd3, type IKeyValue } from 'etcd3';
import { Subject, type Observable } from 'rxjs';
import { checkSeq, Compactions, readBounds, type LogOptions } from '../abstract-log.js';
import { loadCheckpointFile, saveCheckpointFile } from '../checkpoint-file.js';
import { decodeEntry, encodeRecord, stampTime } from '../codec.js';
import { LogError, type Appended, type Checkpoint, type Log, type LogEntry, type LogRecord, type ReadOptions, type Relist, type SavedCheckpoint } from '../log.js';
import { ForeignWriteError, sendAppend, type Pending, type PendingBatch } from './appends.js';
import { compactTo, entryAt, headRevision, keptAt, keptEntries, keptEntry, readEntries, stateAt, type Where } from './history.js';
import { Layout } from './layout.js';
import { compactedTo, CompactedError, watchKey, type KeyWatch } from './watch-key.js';

export interface EtcdLogOptions extends LogOptions {
  /** etcd client URLs, e.g. ['http://127.0.0.1:2379']. */
  servers: string[];
  /** Where this log lies in etcd (layout.ts); default "orchd/". */
  prefix?: string;
  /** This replica's own folder: its checkpoints. */
  dir: string;
  /** Told of each request to etcd and how long it took (kube-apiserver's etcd_request_duration_seconds). */
  onRequest?: (operation: 'create' | 'update' | 'delete' | 'get', type: string, seconds: number) => void;
}

type State = 'new' | 'opening' | 'open' | 'closing' | 'closed';

/** How long a lost etcd connection waits before the watch is made again. */
const REWATCH_MS = 500;
/** How long a quorum read of the newest revision may take: a consistent read waits for it. */
const HEAD_DEADLINE_MS = 2000;
const noop = () => {};

/** The resource of a storage key (`<group>/<plural>/…`) as Kubernetes names it: `<plural>.<group>`, or the core group's plural alone. */
function resourceOf(key: string): string {
  const [group, plural] = key.split('/', 2);
  return group ? `${plural}.${group}` : (plural ?? key);
}

/**
 * The log on etcd, shared by every orchd replica that names the same etcd and prefix. An append is
 * one etcd transaction whose revision is its seq (plus the log's base: layout.ts), guarded in etcd by
 * the key's mod revision (LogRecord.expect); committed$ is fed by one watch of the log key from the
 * last applied revision, so every replica applies every replica's writes in the same order. A seq is
 * handed out before etcd has seen the write (the store stamps it into the object): when another
 * replica took it first, the append fails with RACED and the store decides again once it has caught up.
 */
export class EtcdLog implements Log {
  private readonly client: Etcd3;
  private readonly layout: Layout;
  private state: State = 'new';
  private base = 0;
  private clusterId = '';
  private last = 0;
  private first = 1;
  private assigned = 0;
  private queued: PendingBatch | undefined;
  /** The batch whose transactions are on their way to etcd, one at a time. */
  private sending: PendingBatch | undefined;
  /** Batches sent (or being sent) whose writers have not heard back, in seq order. */
  private unacked: PendingBatch[] = [];
  private flushScheduled = false;
  private making = false;
  /** The commit time of the newest batch sent or seen: a clock that steps back does not make time run backwards. */
  private lastTime = 0;
  /** Entries the watch delivered that are not yet emitted (they wait for the batch in flight). */
  private arrived: LogEntry[] = [];
  private watch: KeyWatch | undefined;
  private rewatch: NodeJS.Timeout | undefined;
  /** Why the log stopped: something other than orchd wrote to this etcd. */
  private brokenBy: Error | undefined;
  /** Reads still taking in what etcd sends: a compaction waits for them. */
  private readonly fetching = new Set<Promise<void>>();
  private readonly compactions = new Compactions();
  /** seq → storage key of the entries the last compaction kept; undefined: every key's state at the horizon. */
  private kept: Map<number, string> | undefined;
  private closing: Promise<void> | undefined;
  private readonly subject = new Subject<LogEntry[]>();
  readonly committed$: Observable<LogEntry[]> = this.subject.asObservable();
  private readonly relists = new Subject<Relist>();
  readonly relisted$: Observable<Relist> = this.relists.asObservable();
  /** What the replicas sign continue tokens with (layout.ts); read when the log opens. */
  secret: Buffer = Buffer.alloc(0);
  /** False while the watch is away from etcd: this replica may be behind. */
  connected = false;

  constructor(private readonly options: EtcdLogOptions) {
    // No retries by the client: a transaction sent twice could find its own first write and take it
    // for another replica's (a failure is UNAVAILABLE, the caller's to retry).
    this.client = new Etcd3({ hosts: options.servers, faultHandling: { global: noRetry } });
    this.layout = new Layout(options.prefix ?? 'orchd/');
  }

  get lastSeq(): number {
    return this.last;
  }

  get firstSeq(): number {
    return this.first;
  }

  private get where(): Where {
    return { client: this.client, layout: this.layout, base: this.base };
  }

  async open(): Promise<void> {
    if (this.state !== 'new') throw new Error(`a log opens once (this one is ${this.state})`);
    this.state = 'opening';
    try {
      await mkdir(this.options.dir, { recursive: true });
      // Creates the log key on first use; its create revision is the base of every seq.
      const res = await this.client.kv.txn({
        compare: [{ key: this.layout.log, target: CompareTarget.Create, result: CompareResult.Equal, create_revision: 0 }],
        success: [{ request_put: { key: this.layout.log, value: Buffer.alloc(0) } }, { request_put: { key: this.layout.secret, value: randomBytes(32) } }],
        failure: [{ request_range: { key: this.layout.log } }],
      });
      this.clusterId = res.header.cluster_id;
      const secret = (await this.client.kv.range({ key: this.layout.secret })).kvs[0]?.value;
      if (!secret) throw new Error(`etcd holds the log at ${this.layout.prefix} but not its secret`);
      this.secret = secret;
      const kv = res.succeeded ? undefined : res.responses[0].response_range.kvs[0];
      this.base = kv ? Number(kv.create_revision) : Number(res.header.revision);
      this.last = kv ? Number(kv.mod_revision) - this.base : 0;
      this.assigned = this.last;
      // The log key holds the newest record: commit times go on from its, whatever the clock says now.
      if (kv && kv.value.length > 0) this.lastTime = decodeEntry(this.last, kv.value).time ?? 0;
      this.first = Math.max(1, (await compactedTo(this.client, this.layout.log, this.base)) - this.base + 1);
      this.state = 'open';
      await this.follow();
    } catch (err) {
      this.state = 'closed';
      this.client.close();
      throw err;
    }
  }

  /** One watch of the log key from the last applied revision, made again when etcd is lost. */
  private async follow(): Promise<void> {
    if (this.state !== 'open' && this.state !== 'closing') return;
    try {
      this.watch = await watchKey(this.client, this.layout.log, this.base + this.lastArrived() + 1, (kvs) => this.onWatch(kvs), (err) => this.onWatchEnd(err));
      this.connected = true;
    } catch (err) {
      this.onWatchEnd(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private lastArrived(): number {
    return this.arrived.length > 0 ? this.arrived[this.arrived.length - 1].seq : this.last;
  }

  private onWatchEnd(err: Error): void {
    this.watch = undefined;
    this.connected = false;
    if (err instanceof CompactedError && this.state === 'open') return void this.relist(err.compactRevision);
    if (this.state === 'open') this.rewatch = setTimeout(() => void this.follow(), REWATCH_MS);
  }

  /**
   * The history this replica had not applied is compacted (it fell behind): as kube-apiserver's watch
   * cache does on etcd's ErrCompacted, it lists the current state at one revision instead (relisted$:
   * the store ends its watchers with 410 and moves its view to it) and watches on from there.
   */
  private async relist(compactRevision: number): Promise<void> {
    try {
      const seq = await this.headSeq();
      const entries = await stateAt(this.where, seq);
      this.arrived = [];
      this.first = Math.max(this.first, compactRevision - this.base + 1);
      this.kept = undefined;
      this.last = Math.max(this.last, seq);
      this.assigned = Math.max(this.assigned, this.last);
      this.relists.next({ seq: this.last, entries });
      // Writers whose appends the state holds (or a later write replaced) hear back.
      this.drain();
      await this.follow();
    } catch {
      // etcd was lost, or compacted again, while the state was read: watching again tries anew.
      if (this.state === 'open') this.rewatch = setTimeout(() => void this.follow(), REWATCH_MS);
    }
  }

  private onWatch(kvs: IKeyValue[]): void {
    for (const kv of kvs) {
      const seq = Number(kv.mod_revision) - this.base;
      // After a new watch, etcd may repeat what the last one delivered.
      if (seq <= this.lastArrived()) continue;
      if (seq !== this.lastArrived() + 1) {
        this.brokenBy = new ForeignWriteError(`the log key jumped from seq ${this.lastArrived()} to ${seq}: something other than orchd writes to this etcd`);
      }
      const entry = decodeEntry(seq, kv.value);
      if (entry.time !== undefined) this.lastTime = Math.max(this.lastTime, entry.time);
      this.arrived.push(entry);
    }
    this.drain();
  }

  append(make: (seq: number) => LogRecord): Appended {
    if (this.state !== 'open') throw new LogError('CLOSED', `the log is ${this.state === 'new' ? 'not open' : this.state}`);
    if (this.brokenBy) throw new LogError('BROKEN', `the log is broken: ${this.brokenBy.message}`, undefined, { cause: this.brokenBy });
    if (this.making) throw new Error('append() called from inside make()');
    const seq = Math.max(this.assigned, this.last) + 1;
    this.making = true;
    let record: LogRecord;
    let bytes: Buffer;
    try {
      record = make(seq);
      bytes = encodeRecord(record);
    } finally {
      this.making = false;
    }
    this.assigned = seq;
    const batch = (this.queued ??= { items: [], openedAt: performance.now() });
    let resolve = noop;
    let reject: (err: Error) => void = noop;
    const durable = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Unhandled if the caller does not wait for durability; callers that wait still see the rejection.
    durable.catch(noop);
    batch.items.push({ entry: { seq, type: record.type, key: record.key, value: record.value }, bytes, expect: record.expect, resolve, reject });
    if (!this.sending && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.flush();
      });
    }
    return { seq, durable };
  }

  /**
   * Sends the queued batch (its appends one after another), unless one is being sent. It does not
   * wait for the watch to bring the batches before it (etcd's answers tell the next revisions): only
   * the acknowledgements follow the watch.
   */
  private flush(): void {
    const batch = this.queued;
    if (!batch || this.sending) return;
    this.queued = undefined;
    this.sending = batch;
    this.unacked.push(batch);
    const time = (this.lastTime = Math.max(Date.now(), this.lastTime));
    for (const p of batch.items) {
      stampTime(p.bytes, time);
      p.entry.time = time;
    }
    void (async () => {
      for (const p of batch.items) {
        const started = performance.now();
        await sendAppend(this.client, this.layout, this.base, p);
        this.options.onRequest?.(p.entry.type === 'delete' ? 'delete' : p.expect === 0 ? 'create' : 'update', resourceOf(p.entry.key), (performance.now() - started) / 1000);
      }
      this.sending = undefined;
      this.settled(batch);
    })();
  }

  /** etcd answered every append of the batch: failures hear it now, the rest once the watch brings them. */
  private settled(batch: PendingBatch): void {
    let failed = false;
    for (const p of batch.items) {
      if (p.outcome === 'ok') continue;
      failed = true;
      if (p.outcome instanceof ForeignWriteError) this.brokenBy ??= p.outcome;
      p.reject(p.outcome ?? new Error('no outcome'));
    }
    if (failed) {
      // The appends queued behind took seqs that counted on every one of these; the next ones count
      // from what etcd holds (a caller told RACED catches up to it first).
      for (const p of this.queued?.items ?? []) p.reject(new LogError('RACED', `seq ${p.entry.seq} cannot follow: an append before it failed`, this.last));
      this.queued = undefined;
      this.assigned = Math.max(this.last, ...this.unacked.flatMap((b) => b.items.filter((p) => p.outcome === 'ok').map((p) => p.entry.seq)));
    }
    if (this.state === 'open' || this.state === 'closing') this.flush();
    this.drain();
  }

  /**
   * Emits what the watch brought, in order. Entries of the batch being sent wait until etcd answered
   * all of it (until then one at its seqs may be another replica's); ours go out with the appended
   * values themselves (committed$ hands a writer's own object on), and a batch's writers hear back
   * once the views applied all of it.
   */
  private drain(): void {
    const ours = new Map<number, Pending>();
    for (const b of this.unacked) if (b !== this.sending) for (const p of b.items) if (p.outcome === 'ok') ours.set(p.entry.seq, p);
    let upto = this.lastArrived();
    // A batch goes out whole (committed$ batches are the appends' batches): held until the watch brought all of it.
    const held = this.unacked.find((b) => b === this.sending || b.items.some((p) => p.outcome === 'ok' && p.entry.seq > upto));
    if (held) upto = Math.min(upto, held.items[0].entry.seq - 1);
    if (upto > this.last) {
      const out = this.arrived.filter((e) => e.seq <= upto);
      this.arrived = this.arrived.slice(out.length);
      const emitted = out.map((e) => {
        const p = ours.get(e.seq);
        return p && p.entry.key === e.key ? p.entry : e;
      });
      this.last = upto;
      this.assigned = Math.max(this.assigned, this.last);
      this.subject.next(emitted);
    }
    while (this.unacked.length > 0 && this.unacked[0] !== this.sending) {
      const batch = this.unacked[0];
      if (batch.items.some((p) => p.outcome === 'ok' && p.entry.seq > this.last)) break;
      this.unacked.shift();
      for (const p of batch.items) if (p.outcome === 'ok') p.resolve();
      this.options.onBatch?.(batch.items.length, performance.now() - batch.openedAt);
    }
    if (this.unacked.length === 0) this.closedDrained?.();
  }

  private closedDrained: (() => void) | undefined;

  read(from: number, to?: number, opts?: ReadOptions): AsyncIterable<LogEntry[]> {
    this.checkReadable();
    const { start, end } = readBounds(from, to, opts, this.first, this.last);
    const kept = start < this.first ? keptEntries(this.where, start, this.first, this.kept) : undefined;
    const live = Math.max(start, this.first) <= end ? readEntries(this.where, Math.max(start, this.first), end) : undefined;
    if (live) {
      this.fetching.add(live.fetched);
      void live.fetched.then(() => this.fetching.delete(live.fetched));
    }
    return (async function* () {
      if (kept) yield* await kept;
      if (live) yield* live.pages;
    })();
  }

  async get(seq: number): Promise<LogEntry | undefined> {
    this.checkReadable();
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.last) return undefined;
    if (seq >= this.first) return entryAt(this.where, seq);
    // Not compacted here since this replica started: every key's state at the horizon is kept.
    this.kept ??= await keptAt(this.where, this.first, () => true);
    const key = this.kept.get(seq);
    return key === undefined ? undefined : keptEntry(this.where, key, seq, this.base + this.first - 1);
  }

  compact(below: number, keep: (seq: number) => boolean = () => false): Promise<void> {
    return this.compactions.run(below, () => this.compactNow(below, keep));
  }

  /**
   * etcd's compaction to the revision of horizon - 1 keeps every key's record at that revision: the
   * state at firstSeq - 1 stays readable entry by entry (as keep() asks of every backend). keep()
   * narrows what this replica hands out of it, until it restarts.
   */
  private async compactNow(below: number, keep: (seq: number) => boolean): Promise<void> {
    if (this.state !== 'open') throw new LogError('CLOSED', `the log is ${this.state}`);
    const horizon = Math.min(below, this.last + 1);
    if (horizon <= this.first) return;
    await Promise.all(this.fetching);
    await compactTo(this.where, this.base + horizon - 1);
    this.first = horizon;
    this.kept = await keptAt(this.where, horizon, keep);
  }

  async headSeq(): Promise<number> {
    this.checkReadable();
    const started = performance.now();
    const head = await headRevision(this.where, HEAD_DEADLINE_MS);
    this.options.onRequest?.('get', 'revision', (performance.now() - started) / 1000);
    return head - this.base;
  }

  private checkpointFile(): string {
    return join(this.options.dir, `etcd-checkpoint-${this.clusterId}-${this.layout.prefix.replace(/[^\w.-]/g, '_')}-${this.base}`);
  }

  async saveCheckpoint(cp: Checkpoint): Promise<void> {
    checkSeq(cp.seq, 'checkpoint seq');
    this.checkReadable();
    if (cp.seq > this.last) throw new LogError('FUTURE_SEQ', `checkpoint at ${cp.seq} is past the last durable seq ${this.last}`, cp.seq);
    await saveCheckpointFile(this.checkpointFile(), cp);
  }

  async loadCheckpoint(): Promise<SavedCheckpoint | undefined> {
    this.checkReadable();
    return loadCheckpointFile(this.checkpointFile());
  }

  close(): Promise<void> {
    return (this.closing ??= this.closeNow());
  }

  private async closeNow(): Promise<void> {
    if (this.state === 'new' || this.state === 'closed') {
      this.state = 'closed';
      return;
    }
    this.state = 'closing';
    this.flush();
    // What was appended before close is written and acknowledged: its callers hold seqs. Not if
    // etcd cannot be reached: then the watch cannot bring it, and those appends fail.
    if (this.unacked.length > 0 && this.connected) await new Promise<void>((resolve) => (this.closedDrained = resolve));
    for (const p of [...this.unacked.flatMap((b) => b.items), ...(this.queued?.items ?? [])]) p.reject(new LogError('CLOSED', 'the log closed before etcd answered'));
    await this.compactions.idle;
    clearTimeout(this.rewatch);
    this.watch?.cancel();
    this.subject.complete();
    this.relists.complete();
    this.state = 'closed';
    this.client.close();
  }

  private checkReadable(): void {
    if (this.state !== 'open' && this.state !== 'closing') {
      throw new LogError('CLOSED', `the log is ${this.state === 'new' ? 'not open' : this.state}`);
    }
  }
}
