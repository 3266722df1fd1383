import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { noop as noRetry } from 'cockatiel';
import { Etcd3, type IOptions } from 'etcd3';
import { Subject } from 'rxjs';
import type { Observable } from 'rxjs';
import { loadCheckpointFile, saveCheckpointFile } from '../checkpoint-file.js';
import { encodeRecord, stampTime } from '../codec.js';
import { LogSkeleton, type Found, type LogOptions } from '../log-skeleton.js';
import { LogError, type Appended, type Checkpoint, type LogEntry, type LogRecord, type Relist, type SavedCheckpoint } from '../log.js';
import { stampVersion, unstampVersion } from '../stamp.js';
import { compactedTo, compactTo, currentOf, entryAt, headRevision, keptAt, keptEntries, readEntries, stateAt, type Where } from './range-reads.js';
import { Layout } from './layout.js';
import { Acks } from './acks.js';
import { OwnWrites } from './own-writes.js';
import { CompactedError, watchPrefix, type PrefixWatch } from './watch-prefix.js';
import { GrpcError, type ChannelTls } from './grpc/channel.js';
import { LeanEtcd } from './grpc/client.js';
import { Result, Target, type Compare, type TxnResponse, type WatchEvent } from './grpc/proto.js';

export interface EtcdLogOptions extends LogOptions {
  /** etcd client URLs, e.g. ['http://127.0.0.1:2379']. */
  servers: string[];
  /** Where this log's objects lie in etcd (layout.ts); default "/orchd/registry/". */
  prefix?: string;
  /** This replica's own folder: its checkpoints. */
  dir: string;
  /** TLS to etcd (https:// servers): the CA to trust, and a client certificate for --client-cert-auth. */
  tls?: ChannelTls;
  /** etcd's own users (etcdctl auth enable): each client asks for a token with these. */
  auth?: { username: string; password: string };
  /** Told of each request to etcd and how long it took (kube-apiserver's etcd_request_duration_seconds). */
  onRequest?: (operation: 'create' | 'update' | 'delete' | 'get', type: string, seconds: number) => void;
}

/** The resource of a storage key (`<group>/<plural>/…`) as Kubernetes names it: `<plural>.<group>`, or the core group's plural alone. */
function resourceOf(key: string): string {
  const [group, plural] = key.split('/', 2);
  return group ? `${plural}.${group}` : (plural ?? key);
}

/** The default prefix (layout.ts); orchd before it kept a log key under "orchd/" (README: moving etcd data). */
export const DEFAULT_PREFIX = '/orchd/registry/';
/** How long a lost etcd connection waits before the watch is made again. */
const REWATCH_MS = 500;
/**
 * How long a write's transaction may take before it answers 503 (it may or may not have applied, as
 * kube-apiserver's etcd timeouts): a held connection otherwise holds the write forever.
 */
const TXN_DEADLINE_MS = 10_000;
/** How long a quorum read of the newest revision may take: a consistent read waits for it. */
const HEAD_DEADLINE_MS = 2000;
/** How often a replica waiting to reach a head in a hole asks etcd for progress, and for how long. */
const NUDGE_EVERY_MS = 10;
const NUDGE_FOR_MS = 3000;

/**
 * The log on etcd, shared by every orchd replica that names the same etcd and prefix, laid out as
 * kube-apiserver lays out its objects (layout.ts). An append is one etcd transaction of its own
 * (a compare on the key's mod revision when the record has an expect, then the put or delete), many
 * in flight at once; its seq is the revision etcd answers with. committed$ is fed by one watch of the
 * prefix (with prev_kv) from the last applied revision, so every replica applies every replica's
 * writes in etcd's order, and an append is acknowledged once that watch has brought it.
 */
export class EtcdLog extends LogSkeleton {
  readonly shared = true;
  /** The library client, for the rare calls (ranges, compaction, status). */
  private readonly client: Etcd3;
  /** The lean client, for the two hot calls: each write's Txn and the watch (grpc/client.ts). */
  private readonly lean: LeanEtcd;
  private readonly layout: Layout;
  private clusterId = '';
  /** The commit time of the newest write sent or seen: a clock that steps back does not make time run backwards. */
  private lastTime = 0;
  private watch: PrefixWatch | undefined;
  private rewatch: NodeJS.Timeout | undefined;
  /** Appends waiting for the watch to bring their revision. */
  private readonly acks = new Acks();
  /** This replica's puts in flight: the watch hands their records back instead of decoding them. */
  private readonly own = new OwnWrites();
  /** Transactions etcd has not answered yet. */
  private readonly sending = new Set<Promise<unknown>>();
  /** Reads still taking in what etcd sends: a compaction waits for them. */
  private readonly fetching = new Set<Promise<void>>();
  /** seq → storage key of the entries the last compaction kept; undefined: every key's state at the horizon. */
  private kept: Map<number, string> | undefined;
  /** The seq of the newest entry the watch brought (0: none yet). */
  private lastEntry = 0;
  private readonly fence = () => this.client.kv.put({ key: this.layout.fence, value: Buffer.alloc(0) });
  /** A progress notification waiting for a second one before it is trusted (watch-prefix.ts, range-reads.ts readEntries). */
  private unconfirmed: number | undefined;
  private nudging: NodeJS.Timeout | undefined;
  /** The newest head a consistent read waits for, and until when progress is asked for it. */
  private nudgeTo = 0;
  private nudgeUntil = 0;
  private readonly progressed = new Subject<number>();
  readonly progress$: Observable<number> = this.progressed.asObservable();
  private readonly relists = new Subject<Relist>();
  readonly relisted$: Observable<Relist> = this.relists.asObservable();
  /** What the replicas sign continue tokens with (layout.ts); read when the log opens. */
  secret: Buffer = Buffer.alloc(0);
  /** False while the watch is away from etcd: this replica may be behind. */
  connected = false;

  constructor(private readonly options: EtcdLogOptions) {
    super();
    // No retries by the client: a transaction sent twice could apply twice (a failure is
    // UNAVAILABLE, the caller's to retry).
    const library: IOptions = { hosts: options.servers, faultHandling: { global: noRetry } };
    // Without a CA, grpc's createSsl trusts the system's roots when given none (not an empty one).
    if (options.tls) library.credentials = { rootCertificate: options.tls.ca ?? (undefined as unknown as Buffer), privateKey: options.tls.key, certChain: options.tls.cert };
    if (options.auth) library.auth = { username: options.auth.username, password: options.auth.password };
    this.client = new Etcd3(library);
    this.lean = new LeanEtcd({ servers: options.servers, tls: options.tls, auth: options.auth });
    this.layout = new Layout(options.prefix ?? DEFAULT_PREFIX);
  }

  private get where(): Where {
    return { client: this.client, lean: this.lean, layout: this.layout };
  }

  protected async _open(): Promise<Found> {
    try {
      await mkdir(this.options.dir, { recursive: true });
      const fresh = randomBytes(32);
      const res = await this.lean.txn(
        {
          compare: [{ key: this.layout.secret, target: Target.Create, result: Result.Equal, value: 0 }],
          success: [{ put: { key: this.layout.secret, value: fresh } }],
          failure: [{ range: { key: this.layout.secret } }],
        },
        TXN_DEADLINE_MS,
      );
      this.clusterId = res.header.cluster_id;
      // Another replica's secret is copied: the answer's bytes are a view of the whole read they came in.
      this.secret = res.succeeded ? fresh : Buffer.from(res.ranges[0][0].value);
      const head = res.header.revision;
      const compacted = await compactedTo(this.where, head);
      // The replica starts at etcd's head: the store replays the history up to it (what etcd's
      // compaction left: from compacted + 1 on, each key's state at compacted kept), then the watch
      // goes on after it.
      return { last: head, first: compacted + 1, horizon: compacted > 0 ? compacted + 1 : undefined };
    } catch (err) {
      this.client.close();
      this.lean.close();
      throw err;
    }
  }

  protected override _opened(): void {
    // Once the log is open (just after this): follow() watches only an open log.
    queueMicrotask(() => void this.follow());
  }

  /** One watch of the prefix from the last applied revision, made again when etcd is lost. */
  private async follow(): Promise<void> {
    if (!this.isOpen) return;
    try {
      this.watch = await watchPrefix(this.lean, this.layout.prefix, this.layout.end, this.last + 1, {
        onEvents: (events) => this.onEvents(events),
        onProgress: (revision) => this.onProgress(revision),
        onEnd: (err) => this.onWatchEnd(err),
      });
      this.connected = true;
    } catch (err) {
      this.onWatchEnd(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private onWatchEnd(err: Error): void {
    this.watch = undefined;
    this.connected = false;
    this.unconfirmed = undefined;
    if (err instanceof CompactedError && this.isOpen) return void this.relist(err.compactRevision);
    if (this.isOpen) this.rewatch = setTimeout(() => void this.follow(), REWATCH_MS);
  }

  /**
   * The history this replica had not applied is compacted (it fell behind): as kube-apiserver's watch
   * cache does on etcd's ErrCompacted, it lists the current state at one revision instead (relisted$:
   * the store ends its watchers with 410 and moves its view to it) and watches on from there.
   */
  private async relist(compactRevision: number): Promise<void> {
    try {
      const seq = await headRevision(this.where, HEAD_DEADLINE_MS);
      const entries = await stateAt(this.where, seq);
      this.first = Math.max(this.first, compactRevision + 1);
      this.kept = undefined;
      this.last = Math.max(this.last, seq);
      this.relists.next({ seq: this.last, entries });
      // Writers whose appends the state holds (or a later write replaced) hear back.
      this.acks.through(this.last);
      await this.follow();
    } catch {
      // etcd was lost, or compacted again, while the state was read: watching again tries anew.
      if (this.isOpen) this.rewatch = setTimeout(() => void this.follow(), REWATCH_MS);
    }
  }

  private onEvents(events: WatchEvent[]): void {
    const entries: LogEntry[] = [];
    let through = this.last;
    for (const ev of events) {
      const seq = ev.kv.mod_revision;
      // After a new watch, etcd may repeat what the last one delivered.
      if (seq <= this.last) continue;
      through = Math.max(through, seq);
      if (!this.layout.isObject(ev.kv.key)) continue;
      const entry = (ev.type === 'Put' && this.own.size > 0 && this.own.take(seq, this.layout.keyOf(ev.kv.key), ev.kv.value)) || this.layout.eventEntry(ev);
      if (entry.time !== undefined) this.lastTime = Math.max(this.lastTime, entry.time);
      entries.push(entry);
      this.lastEntry = seq;
    }
    if (through === this.last) return;
    this.last = through;
    if (entries.length > 0) this.subject.next(entries);
    // The views stand at their last entry's seq: events that end on the log's own keys (a fence, the
    // secret) move them on too, or a consistent read waits for a revision no later event brings.
    if (entries.length === 0 || entries[entries.length - 1].seq < through) this.progressed.next(through);
    this.acks.through(through);
  }

  /**
   * etcd has sent everything through revision. Trusted only once a second notification confirms it:
   * etcd 3.4 may send a requested notification ahead of events it has queued (etcd issue 15220),
   * and a revision taken too early would skip them.
   */
  private onProgress(revision: number): void {
    if (revision <= this.last) return;
    if (this.unconfirmed === undefined) {
      this.unconfirmed = revision;
      this.watch?.requestProgress();
      return;
    }
    const through = this.unconfirmed;
    this.unconfirmed = revision;
    if (through <= this.last) return;
    this.last = through;
    this.progressed.next(through);
    this.acks.through(through);
  }

  /**
   * A consistent read waits for head: holes before it are passed by progress notifications, asked for
   * until it is reached. A newer head asked for meanwhile raises the mark, or that read would wait
   * for a write or etcd's own progress interval once the older head is reached.
   */
  private nudge(head: number): void {
    if (this.last >= head) return;
    this.nudgeTo = Math.max(this.nudgeTo, head);
    this.nudgeUntil = Date.now() + NUDGE_FOR_MS;
    if (this.nudging) return;
    this.nudging = setInterval(() => {
      if (this.last >= this.nudgeTo || Date.now() > this.nudgeUntil || !this.isOpen) {
        clearInterval(this.nudging);
        this.nudging = undefined;
        return;
      }
      this.watch?.requestProgress();
    }, NUDGE_EVERY_MS);
    this.watch?.requestProgress();
  }

  /**
   * The value is stored without its resourceVersion (its seq is not known yet) and stamped with it
   * once etcd answers; every reader stamps stored values from their revision (stamp.ts).
   */
  append(record: LogRecord): Appended {
    this.checkWritable();
    unstampVersion(record.value);
    const bytes = encodeRecord(record);
    const time = (this.lastTime = Math.max(Date.now(), this.lastTime));
    stampTime(bytes, time);
    const forget = this.own.add(record, bytes, time);
    const durable = this.send(record, bytes);
    // Also what keeps a failed append from being an unhandled rejection.
    durable.then(forget, forget);
    return { seq: undefined, durable };
  }

  private async send(record: LogRecord, bytes: Buffer): Promise<number> {
    const object = this.layout.object(record.key);
    const compare: Compare[] = [];
    if (record.expect !== undefined) compare.push({ key: object, target: Target.Mod, result: Result.Equal, value: record.expect });
    // Deleting a key that is gone writes nothing (no revision, no event): it must exist.
    else if (record.type === 'delete') compare.push({ key: object, target: Target.Mod, result: Result.Greater, value: 0 });
    const txn = this.lean.txn(
      {
        compare,
        success: [record.type === 'put' ? { put: { key: object, value: bytes } } : { deleteRange: { key: object } }],
        failure: [{ range: { key: object } }],
      },
      TXN_DEADLINE_MS,
    );
    this.sending.add(txn);
    const started = performance.now();
    let res: TxnResponse;
    try {
      res = await txn;
      this.options.onRequest?.(record.type === 'delete' ? 'delete' : record.expect === 0 ? 'create' : 'update', resourceOf(record.key), (performance.now() - started) / 1000);
    } catch (err) {
      // The transaction may or may not have been applied; the watch will tell the views.
      const why = err instanceof GrpcError || err instanceof Error ? err.message : String(err);
      throw new LogError('UNAVAILABLE', `etcd could not be reached: ${why}`, undefined, { cause: err });
    } finally {
      this.sending.delete(txn);
    }
    if (!res.succeeded) {
      const kv = res.ranges[0]?.[0];
      const found = kv && this.layout.entryOf(kv);
      throw new LogError('CONFLICT', `key ${record.key} is at ${found?.seq ?? 0}, not ${record.expect ?? 'present'}`, found?.seq ?? 0, undefined, found);
    }
    const seq = res.header.revision;
    // Acknowledged once this replica's views hold it (read-your-writes). The watch often brought it
    // in the same read as the answer: then there is nothing to wait for, not even a turn.
    if (this.last < seq) await this.acks.wait(seq, () => this.last);
    stampVersion(record.value, seq);
    return seq;
  }

  protected async _drain(): Promise<void> {
    // What etcd already took is acknowledged once the watch brings it; not when etcd cannot be reached.
    await Promise.allSettled([...this.sending]);
    if (this.connected) await this.acks.idle(NUDGE_FOR_MS);
    this.acks.fail(new LogError('CLOSED', 'the log closed before etcd answered'));
  }

  protected async _close(): Promise<void> {
    clearTimeout(this.rewatch);
    clearInterval(this.nudging);
    this.watch?.cancel();
    this.progressed.complete();
    this.relists.complete();
    this.client.close();
    this.lean.close();
  }

  protected _read(start: number, end: number): AsyncIterable<LogEntry[]> {
    const kept = start < this.first ? keptEntries(this.where, start, this.first, this.kept) : undefined;
    // Unless an entry is known past end (or at it), the read needs a fence to end on.
    const fenced = this.lastEntry >= end ? undefined : this.fence;
    const live = Math.max(start, this.first) <= end ? readEntries(this.where, Math.max(start, this.first), end, fenced) : undefined;
    if (live) {
      this.fetching.add(live.fetched);
      void live.fetched.then(() => this.fetching.delete(live.fetched));
    }
    return (async function* () {
      if (kept) yield* await kept;
      if (live) yield* live.pages;
    })();
  }

  protected async _get(seq: number, key?: string): Promise<LogEntry | undefined> {
    if (seq >= this.first) return entryAt(this.where, seq, key, this.fence);
    // Not compacted here since this replica started: every key's state at the horizon is kept.
    this.kept ??= await keptAt(this.where, this.first, () => true);
    const keptKey = this.kept.get(seq);
    return keptKey === undefined || (key !== undefined && key !== keptKey) ? undefined : entryAt(this.where, seq, keptKey, this.fence);
  }

  /**
   * etcd's compaction to the revision of horizon - 1 keeps every key's record at that revision: the
   * state at firstSeq - 1 stays readable entry by entry (as keep() asks of every backend). keep()
   * narrows what this replica hands out of it, until it restarts.
   */
  protected async _compact(horizon: number, keep: (seq: number) => boolean, moved: () => void): Promise<void> {
    await Promise.all(this.fetching);
    await compactTo(this.where, horizon - 1);
    moved();
    this.kept = await keptAt(this.where, horizon, keep);
  }

  async headSeq(): Promise<number> {
    this.checkReadable();
    const started = performance.now();
    const head = await headRevision(this.where, HEAD_DEADLINE_MS);
    this.options.onRequest?.('get', 'revision', (performance.now() - started) / 1000);
    this.nudge(head);
    return head;
  }

  current(key: string): Promise<LogEntry | undefined> {
    this.checkReadable();
    return currentOf(this.where, key);
  }

  private checkpointFile(): string {
    return join(this.options.dir, `etcd-checkpoint-${this.clusterId}-${this.layout.name.replace(/[^\w.-]/g, '_')}`);
  }

  protected _saveCheckpoint(cp: Checkpoint): Promise<void> {
    return saveCheckpointFile(this.checkpointFile(), cp);
  }

  protected _loadCheckpoint(): Promise<SavedCheckpoint | undefined> {
    return loadCheckpointFile(this.checkpointFile());
  }
}
