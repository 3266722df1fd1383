/**
 * The history in a data folder, read from a snapshot of its log folder (log-snapshot.ts: hard links
 * to LevelDB's immutable table files, copies of the few small files that change) made in a temp
 * folder and removed on close, whether a server holds the folder or not: opening LevelDB writes to
 * its folder, and a reader must leave every byte of a stopped folder as it was, and read one it may
 * not write (a read-only mount, another user's folder). Where a table cannot be linked (another file
 * system, a file the user may not write), it is copied.
 *
 * What a command asks is answered with as little as it needs. The log alone says the horizon, the
 * head and commit times; `history` of one object and the state at a version read the log's version
 * index, then only the entries it names (index-reads.ts). A folder an older orchd wrote has no index:
 * there `history` reads the object's revisions from the checkpoint's heads (store/checkpoint-reader.ts)
 * and the log's tail after it, and the state reads the checkpoint file's parts and the log
 * (checkpoint-state.ts).
 * The rest (the log's changes with their types) opens the copy as the server opens it: a
 * Store rebuilt from the checkpoint and the log's tail, whose key index answers reads at a version,
 * through encryption at rest. So does everything when --encryption-provider-config is given, or
 * when an entry read turns out sealed (the plain log cannot open it; the encrypted one says which).
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EncryptionConfiguration } from '../../config/encryption.js';
import type { EncryptedLog } from '../../log/encryption/index.js';
import { checkpointFile, LevelDbLog } from '../../log/leveldb-log.js';
import type { Log, LogEntry } from '../../log/log.js';
import type { KubeObject } from '../../api/types.js';
import type { Store } from '../../store/store.js';
import { splitKey } from '../../api/object-keys.js';
import { LazyObject, storedOf, type StoredObject } from '../../store/stored-object.js';
import { objectsAt, revisionsOf, stampedTimeMs, versionsOf, type KeyVersion } from '../../store/versions.js';
import { checkpointRevisions } from '../../store/checkpoint-reader.js';
import { entriesAt, indexedState, indexedVersions, namesOneObject } from './index-reads.js';
import { isSealed, openCheckpointState } from './checkpoint-state.js';
import { collectionOfKind, selects, StampClock, takesKind, writerOf, type Change, type Filter, type History, type StateFilter, type Stored } from '../core/history.js';
import { TimeTravelError } from '../core/errors.js';
import { writersOf } from '../core/entry-writers.js';
import { removedAtExit, removedNow, snapshotLogFolder, snapshotProblem } from './log-snapshot.js';

/** The newest version whose state is folded from the log rather than read from a rebuilt store. */
const FOLD_MAX = 100_000;

/**
 * Opens a copy of a recorded log through its encryption at rest, once its KMS plugins answer. sync
 * false: a copy written to that nobody reads after a crash (the replay's served log).
 */
export async function openLogCopy(path: string, encryption: EncryptionConfiguration | undefined, sync = true, buildIndex = true): Promise<EncryptedLog> {
  const { encryptAtRest, COMMAND_KMS_WAIT_MS } = await import('../../log/encryption/index.js');
  const log = encryptAtRest(new LevelDbLog({ path, sync, buildIndex }), encryption);
  await log.open();
  if (!(await log.ready(COMMAND_KMS_WAIT_MS))) {
    await log.close();
    throw new TimeTravelError(
      `the KMS plugins did not answer within ${COMMAND_KMS_WAIT_MS} ms: ${log
        .health()
        .map((h) => h.problem)
        .join('; ')}`,
    );
  }
  return log;
}

/** The data folder's log folder, or an error saying there is none. */
export async function logFolderOf(dataDir: string): Promise<string> {
  const folder = join(dataDir, 'log');
  const s = await stat(folder).catch(() => undefined);
  if (!s?.isDirectory()) throw new TimeTravelError(`--data-dir ${dataDir}: no orchd log there (no folder ${folder})`);
  return folder;
}

/**
 * The history in the data folder dataDir, read from a snapshot of its log folder whether or not a
 * server holds it: LevelDB cannot open a folder without writing to it (recovery writes a new
 * manifest, folds the write-ahead log into a table, rewrites CURRENT and its own LOG), so a reader
 * that opened the folder itself would change its bytes and could not read a read-only one.
 */
export async function openDataDir(dataDir: string, encryption?: EncryptionConfiguration): Promise<History> {
  const folder = await logFolderOf(dataDir);
  const work = await mkdtemp(join(tmpdir(), 'orchd-timetravel-'));
  removedAtExit(work);
  try {
    await snapshotLogFolder(folder, join(work, 'log'));
    // LevelDB would make an empty log where there is none, and answer as if nothing was ever written.
    await stat(join(work, 'log', 'CURRENT'));
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw new TimeTravelError(`--data-dir ${dataDir}: cannot read its log (${folder}): ${snapshotProblem(err)}`, { cause: err });
  }
  const history = new DataDirHistory(join(work, 'log'), work, encryption);
  try {
    await history.open();
    return history;
  } catch (err) {
    await history.close();
    // classic-level says only "Database failed to open"; what LevelDB found is its cause.
    if ((err as { code?: string }).code !== 'LEVEL_DATABASE_NOT_OPEN') throw err;
    const cause = (err as { cause?: Error }).cause;
    throw new TimeTravelError(`--data-dir ${dataDir}: its log (${folder}) cannot be opened: ${cause?.message ?? (err as Error).message}`, { cause: err });
  }
}

/** A stored object as a command prints it: its JSON is written from its stored bytes, not kept on it (as a server's list keeps it). */
class StoredItem implements Stored {
  constructor(private readonly s: StoredObject) {}

  get key(): string {
    return this.s.key;
  }

  get object(): KubeObject {
    return this.s.obj;
  }

  get seq(): number {
    return this.s.seq;
  }

  msgpack(): Buffer | undefined {
    return this.s instanceof LazyObject ? this.s.raw : undefined;
  }
}

class DataDirHistory implements History {
  /** The plain log (no encryption given), until something needs the store; then the store's log. */
  private log!: Log;
  private encrypted: EncryptedLog | undefined;
  private store: Store | undefined;
  timesFromLog = true;

  constructor(
    private readonly path: string,
    /** The temp folder of the snapshot read (removed on close); undefined when the folder is read where it is. */
    private readonly work: string | undefined,
    private readonly encryption: EncryptionConfiguration | undefined,
  ) {}

  async open(): Promise<void> {
    if (this.encryption) await this.encryptedLog();
    else {
      // A folder an older orchd wrote has no version index: its reads take the ways that need none
      // rather than paying a scan of the whole log to build one in a copy thrown away on close.
      this.log = new LevelDbLog({ path: this.path, buildIndex: false });
      await this.log.open();
    }
    const { firstSeq, lastSeq } = this.log;
    const first = lastSeq >= firstSeq ? await this.log.get(firstSeq) : undefined;
    this.timesFromLog = first === undefined || first.time !== undefined;
  }

  /** The copy's log as the server reads it: through encryption at rest. */
  private async encryptedLog(): Promise<EncryptedLog> {
    if (this.encrypted) return this.encrypted;
    await this.log?.close();
    this.encrypted = await openLogCopy(this.path, this.encryption, true, false);
    this.log = this.encrypted;
    return this.encrypted;
  }

  /** The copy opened as the server opens it: a Store rebuilt from the encrypted log. */
  private async full(): Promise<Store> {
    if (this.store) return this.store;
    const log = await this.encryptedLog();
    const { Store } = await import('../../store/store.js');
    const store = new Store({ log, checkpointEvery: Number.MAX_SAFE_INTEGER });
    await store.start();
    this.store = store;
    this.checkOpened();
    return store;
  }

  /**
   * Throws when an entry read through encryption at rest did not open (its key is not in the
   * configuration given, or none was): the encrypted log hands such an entry on as a delete of its
   * key, which would be a wrong answer, not a missing one.
   */
  private checkOpened(e?: LogEntry): void {
    const corrupt = this.encrypted?.corrupt;
    if (!corrupt) return;
    const found = e ? (corrupt.get(e.key)?.seq === e.seq ? ([e.key, corrupt.get(e.key)!] as const) : undefined) : corrupt.entries().next().value;
    if (found) {
      const [key, { seq, message }] = found;
      throw new TimeTravelError(`log entry ${seq} (${key}) cannot be read: ${message}; an encrypted log needs the --encryption-provider-config it was written with`);
    }
  }

  get oldest(): number {
    return this.log.firstSeq - 1;
  }

  get head(): number {
    return this.log.lastSeq;
  }

  /** ADDED, MODIFIED or DELETED: what a watch reports for entry e (a put after a delete adds again). */
  private typeOf(store: Store, e: LogEntry): Change['type'] {
    if (e.type === 'delete') return 'DELETED';
    const revs = revisionsOf(store, e.key);
    const i = revs.findIndex((r) => Math.abs(r) === e.seq);
    return i > 0 && revs[i - 1] > 0 ? 'MODIFIED' : 'ADDED';
  }

  async *changes(from: number, to: number, filter: Filter): AsyncIterable<Change> {
    const store = await this.full();
    const clock = this.timesFromLog ? undefined : new StampClock();
    for await (const page of this.log.read(Math.max(from, 1), to)) {
      for (const e of page) {
        const time = clock ? clock.timeOf(e.value) : e.time;
        if (!takesKind(filter, e.key)) continue;
        const object = e.value as KubeObject;
        if (!selects(filter, e.key, () => object)) continue;
        yield { rv: e.seq, type: this.typeOf(store, e), key: e.key, object, time, writer: writerOf(e) };
      }
    }
  }

  async stateAt(rv: number, filter: StateFilter): Promise<Stored[]> {
    const out: Stored[] = [];
    // A loop, not push(...page): a page may be long.
    for await (const page of this.statePages(rv, filter)) for (const s of page) out.push(s);
    return out;
  }

  /**
   * The objects at rv, a page at a time. From the fastest source that answers: one object, from the
   * version index; near the start of a log never compacted, the log folded; many, from the
   * checkpoint file and the log after it (checkpoint-state.ts: each object's bytes in key order, a
   * part at a time, where the index would fetch each by its seq); else the index; else (a folder
   * an older orchd wrote) the store, as a server rebuilds it.
   */
  async *statePages(rv: number, filter: StateFilter, reuse = false): AsyncIterable<Stored[]> {
    const prefix = filter.namespace === undefined ? '' : `${filter.namespace}/`;
    const collections = filter.kinds.map(collectionOfKind);
    let pages: AsyncIterable<StoredObject[]> | Iterable<StoredObject[]> | undefined;
    const index = this.encryption || this.store || rv < this.log.firstSeq - 1 ? undefined : this.log.index;
    if (index && namesOneObject(filter)) pages = indexedState(this.log, index, rv, filter);
    // Near the start of a log never compacted (an export's first state), folding the few entries
    // before rv reads less than every part head of a checkpoint near the head (at 1M keys, 0.7 s of
    // decoding for a state of a few objects; folding costs ~28 µs an entry there, so up to 1/64 of
    // the log), and, up to 1/16 of it, less than the index's rows of every key of the kinds.
    const foldable = !this.store && this.log.firstSeq === 1;
    if (!pages && foldable && rv <= Math.min(FOLD_MAX, this.log.lastSeq / 64)) pages = [await this.folded(rv, filter)];
    if (!pages && !this.store && !this.encryption) pages = await openCheckpointState(checkpointFile(this.path), this.log)?.pages(rv, collections, prefix, reuse);
    if (!pages && foldable && rv <= Math.min(FOLD_MAX, this.log.lastSeq / 16)) pages = [await this.folded(rv, filter)];
    if (!pages && index) pages = indexedState(this.log, index, rv, filter);
    if (!pages && foldable && rv <= FOLD_MAX) pages = [await this.folded(rv, filter)];
    pages ??= [await objectsAt(await this.full(), rv, collections, prefix)];
    for await (const page of pages) {
      const out: Stored[] = [];
      for (const s of page) if (selects(filter, s.key, () => s.obj)) out.push(new StoredItem(s));
      if (out.length > 0) yield out;
    }
  }

  /**
   * The objects at rv by folding the log from its start (never compacted), in key order: what the
   * store answers, for a version near the start. Export of a whole log asks the state at its first
   * version, and rebuilding the store for it (every key of a checkpoint made into the key index)
   * was most of the export's time.
   */
  private async folded(rv: number, filter: Filter): Promise<StoredObject[]> {
    const at = new Map<string, StoredObject>();
    for await (const page of (await this.encryptedLog()).read(1, rv)) {
      for (const e of page) {
        this.checkOpened(e);
        if (e.type === 'delete') at.delete(e.key);
        else at.set(e.key, storedOf(e, e.key, e.seq));
      }
    }
    const kept = [...at.values()].filter((s) => takesKind(filter, s.key)).map((s) => ({ s, ...splitKey(s.key) }));
    kept.sort((a, b) => (a.collection !== b.collection ? (a.collection < b.collection ? -1 : 1) : a.suffix < b.suffix ? -1 : a.suffix > b.suffix ? 1 : 0));
    return kept.map((k) => k.s);
  }

  async versionsOf(key: string): Promise<Change[]> {
    const index = this.encryption || this.store ? undefined : this.log.index;
    const indexed = index && (await indexedVersions(this.log, index, key));
    const versions = indexed || (!this.store && (await this.plainVersionsOf(key))) || (await versionsOf(await this.full(), key));
    const clock = this.timesFromLog ? undefined : new StampClock();
    const writer = writersOf();
    return versions.map(({ entry: e, type }) => ({ rv: e.seq, type, key, object: e.value as KubeObject, time: clock ? clock.timeOf(e.value) : e.time, writer: writer(e) }));
  }

  /**
   * The versions of key from the plain log: its revisions in the checkpoint and in the log after it,
   * then those entries, as the store's versionsOf reads them. undefined where only the store can
   * tell (no checkpoint it would load, a sealed entry).
   */
  private async plainVersionsOf(key: string): Promise<KeyVersion[] | undefined> {
    const cp = checkpointRevisions(checkpointFile(this.path), key);
    // The store replays the whole log instead of a checkpoint older than the horizon.
    if (!cp || cp.seq < this.log.firstSeq - 1 || cp.seq > this.log.lastSeq) return undefined;
    const revisions = [...cp.revisions];
    // The tail's entries of the key are kept as they are read: read again, they were half the time.
    const tail: LogEntry[] = [];
    for await (const page of this.log.read(cp.seq + 1)) {
      for (const e of page) {
        if (e.key !== key) continue;
        revisions.push(e.type === 'delete' ? -e.seq : e.seq);
        tail.push(e);
      }
    }
    const entries = await entriesAt(this.log, cp.revisions.map(Math.abs));
    for (const e of tail) entries.set(e.seq, e);
    const out: KeyVersion[] = [];
    let before: number | undefined;
    for (const r of revisions) {
      const entry = entries.get(Math.abs(r));
      if (entry && isSealed(entry)) return undefined;
      if (entry) out.push({ entry, type: r < 0 ? 'DELETED' : before !== undefined && before > 0 ? 'MODIFIED' : 'ADDED' });
      before = r;
    }
    return out;
  }

  async *storedEntries(from: number, to: number): AsyncIterable<LogEntry[]> {
    // Through encryption at rest, as the store reads them: a sealed value comes opened, or as the stub of a corrupt one.
    for await (const page of (await this.encryptedLog()).read(Math.max(from, 1), to)) {
      for (const e of page) this.checkOpened(e);
      yield page;
    }
  }

  /** From the log as it is open (entry() would reopen it through encryption at rest under a state being read): a sealed value's writer and time are in the clear. */
  async writesAt(seqs: readonly number[]): Promise<(LogEntry | undefined)[]> {
    return Promise.all(seqs.map((seq) => this.log.get(seq)));
  }

  async entry(seq: number): Promise<LogEntry | undefined> {
    const e = await (await this.encryptedLog()).get(seq);
    if (e) this.checkOpened(e);
    return e;
  }

  storedRecords(from: number, to: number): AsyncIterable<{ seqs: number[]; records: Buffer[] }> | undefined {
    // The LevelDB log under whichever is open (encryption at rest wraps it): with a configuration
    // given, values are opened (storedEntries) rather than copied sealed.
    const plain = this.encrypted ? this.encrypted.inner : this.log;
    return this.encryption || !(plain instanceof LevelDbLog) ? undefined : plain.storedRecords(from, to);
  }

  async versionAt(timeMs: number): Promise<number> {
    const { firstSeq, lastSeq } = this.log;
    if (lastSeq < firstSeq) return 0;
    if (this.timesFromLog) {
      // Commit times never decrease along the log: the newest entry at or before timeMs, by halves.
      let lo = firstSeq - 1;
      let hi = lastSeq;
      while (lo < hi) {
        const mid = lo + Math.ceil((hi - lo) / 2);
        const t = (await this.log.get(mid))?.time ?? 0;
        if (t <= timeMs) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    }
    // Guessed from the objects' stamps: read through encryption at rest, as the store reads them.
    await this.full();
    const clock = new StampClock();
    let found = 0;
    for await (const page of this.log.read(firstSeq, lastSeq)) {
      for (const e of page) {
        const t = clock.timeOf(e.value);
        if (t !== undefined && t > timeMs) return found;
        found = e.seq;
      }
    }
    return found;
  }

  async timeOf(rv: number): Promise<number | undefined> {
    const e = rv >= this.log.firstSeq ? await this.log.get(rv) : undefined;
    return this.timesFromLog ? e?.time : stampedTimeMs(e?.value);
  }

  async close(): Promise<void> {
    try {
      await this.store?.close();
      await this.log?.close();
    } finally {
      if (this.work) {
        // Synchronously: a few hundred links, and a promise each cost more than the unlinks (log-snapshot.ts).
        rmSync(this.work, { recursive: true, force: true });
        removedNow(this.work);
      }
    }
  }
}
