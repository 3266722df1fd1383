import { Subject } from 'rxjs';
import type { Observable } from 'rxjs';
import { framePart, packJson, unframeParts, unpackJson } from '../codec.js';
import { partBuffer, type Appended, type Checkpoint, type Log, type LogEntry, type LogRecord, type ReadOptions, type Relist, type SavedCheckpoint } from '../log.js';
import { stampVersion } from '../stamp.js';
import { CorruptEntryError, CorruptObjects } from './corrupt-objects.js';
import type { ResourceProviders } from './providers.js';
import { StoredValues } from './stored-values.js';
import { TransformError } from './transformer.js';

/** The start of a checkpoint this log wrapped (a corrupt-objects header, then the sealed checkpoint). */
const ENVELOPE = Buffer.from('orchd-encrypted-checkpoint/1\n', 'utf8');

/**
 * Encryption at rest as a Log around the real one. Values of the selected resources are sealed by
 * their first provider when appended, and opened (by their stored prefix) when read back: a replay,
 * a history read, a checkpoint. Keys stay plain. Everything above sees plain objects, and
 * committed$ hands out the very objects appended (no decryption of one's own writes).
 *
 * A stored value that no configured provider opens is corrupt: while the log is read in order (the
 * replay at start) it is recorded in `corrupt` and handed on as a delete of the key with a stub, so
 * the view holds no stale older state of it; the API answers reads of it with a corrupt-object error.
 * A past version read again (history, watch replay) that does not open throws CorruptEntryError.
 * Checkpoints are sealed whole, and carry the corrupt objects as stored.
 *
 * Opening is synchronous, but a KMS provider needs its plugin to open a data key: every read first
 * awaits the providers' prepare() over the page it read (stored-values.ts), then opens the page.
 * The providers in use can be replaced while the log is open (a reloaded configuration); each read
 * prepares and opens with the same providers.
 */
export class EncryptedLog implements Log {
  readonly corrupt = new CorruptObjects();
  /** Values (and writers) appended sealed, by seq, until committed$ hands them out. */
  private readonly appended = new Map<number, { value: unknown; writer: LogRecord['writer'] }>();
  private readonly subject = new Subject<LogEntry[]>();
  readonly committed$: Observable<LogEntry[]> = this.subject.asObservable();
  /** The newest seq read or committed: only entries past it change what is corrupt. */
  private newest = 0;

  /** Providers replaced by a reload, closed once reads that may still use them are over. */
  private readonly retired = new Set<ResourceProviders>();

  readonly shared: boolean;
  readonly headSeq: Log['headSeq'];
  readonly current: Log['current'];
  readonly entriesAt: Log['entriesAt'];
  readonly progress$: Log['progress$'];
  private readonly progressed = new Subject<number>();
  private readonly relists = new Subject<Relist>();
  readonly relisted$: Log['relisted$'];
  /** What the inner log handed on that waits for data keys to be opened, and everything after it (see inOrder). */
  private tail: Promise<void> | undefined;

  constructor(
    readonly inner: Log,
    private values: StoredValues,
  ) {
    this.shared = inner.shared;
    this.headSeq = inner.headSeq && (() => inner.headSeq!());
    // The inner log's one ordered pass, each page opened as read() opens one.
    this.entriesAt = inner.entriesAt && ((seqs) => this.opening(inner.entriesAt!(seqs)));
    // Only etcd shares a log, and it seals nothing of its own: a current record is opened as a read one is.
    this.current =
      inner.current &&
      (async (key) => {
        const e = await inner.current!(key);
        if (!e) return e;
        const values = this.values;
        if (values.needsPreparing && mayBeSealed(e)) await values.prepare([e]);
        try {
          const value = values.open(e.key, e.value);
          return value === e.value ? e : { seq: e.seq, type: e.type, key: e.key, value: stampVersion(value, e.seq), time: e.time };
        } catch (err) {
          throw err instanceof TransformError ? new CorruptEntryError(e.key, e.seq, err.message) : err;
        }
      });
    // In order with the entries: a hole passed must not overtake entries still waiting for a data key.
    this.progress$ = inner.progress$ && this.progressed.asObservable();
    inner.progress$?.subscribe((seq) => this.inOrder([], () => this.progressed.next(seq)));
    inner.committed$.subscribe({
      next: (batch) => {
        // Another replica's entries (a shared log) are the ones read from storage.
        const read = this.values.needsPreparing ? batch.filter((e) => e.raw && !this.appended.has(e.seq)) : [];
        this.inOrder(read, () => this.subject.next(this.onCommitted(batch)));
      },
      error: (err: unknown) => this.inOrder([], () => this.subject.error(err)),
      complete: () => this.inOrder([], () => this.subject.complete()),
    });
    this.relisted$ = inner.relisted$ && this.relists.asObservable();
    inner.relisted$?.subscribe({
      next: (r) => this.inOrder(r.entries, () => this.relists.next(this.onRelisted(r))),
      complete: () => this.inOrder([], () => this.relists.complete()),
    });
  }

  /**
   * Hands on, in order, what the inner log committed or relisted. Another replica's values (a shared
   * log) may be sealed with a data key this replica never made: a KMS plugin must open it first (as
   * kube-apiserver does with the encrypted data key stored beside each value), so those wait for
   * prepare(), and whatever comes after them waits its turn.
   */
  private inOrder(read: readonly LogEntry[], emit: () => void): void {
    const values = this.values;
    const toPrepare = values.needsPreparing ? read.filter(mayBeSealed) : [];
    if (!this.tail && toPrepare.length === 0) return emit();
    const run = (this.tail ?? Promise.resolve()).then(async () => {
      try {
        if (toPrepare.length > 0) await values.prepare(toPrepare);
        emit();
      } catch (err) {
        this.subject.error(err);
      }
    });
    this.tail = run;
    void run.then(() => {
      if (this.tail === run) this.tail = undefined;
    });
  }

  get lastSeq(): number {
    return this.inner.lastSeq;
  }

  get firstSeq(): number {
    return this.inner.firstSeq;
  }

  /** Opens the log and starts polling the KMS plugins (see ready()). */
  open(): Promise<void> {
    this.values.providers.start();
    return this.inner.open();
  }

  async close(): Promise<void> {
    try {
      await this.inner.close();
    } finally {
      this.values.providers.close();
      for (const p of this.retired) p.close();
      this.retired.clear();
    }
  }

  /**
   * Whether every KMS plugin answered healthy and gave a data key, waiting for it (at most limitMs
   * when given): before that, values sealed by a plugin cannot be read back, so a replay must wait
   * for it (and writes would fail).
   */
  ready(limitMs?: number): Promise<boolean> {
    return this.values.providers.ready(limitMs);
  }

  /** The providers values are sealed and opened with now. */
  get providers(): ResourceProviders {
    return this.values.providers;
  }

  /** The KMS plugins that fail their health check, with why (the kms-providers check of /readyz). */
  health(): { name: string; problem: string }[] {
    return this.values.providers.health();
  }

  /**
   * Serves with other providers from now on (a reloaded EncryptionConfiguration): writes use the
   * new first providers, reads find their provider by prefix among the new ones. The old ones are
   * closed after graceMs, once reads that started with them are done.
   */
  useProviders(next: ResourceProviders, graceMs: number): void {
    const old = this.values.providers;
    this.values = new StoredValues(next);
    this.retired.add(old);
    setTimeout(() => {
      if (this.retired.delete(old)) old.close();
    }, graceMs).unref();
  }

  /**
   * A sealed value is sealed before its seq is known: its plaintext does not carry its
   * resourceVersion, which the reader stamps when it opens it (opened()).
   */
  append(record: LogRecord): Appended {
    let appended: Appended;
    if (this.values.storesPlainly(record.key)) appended = this.inner.append(record);
    else {
      const sealed = this.values.seal(record.key, record.value);
      // The writer is sealed as the value is: who wrote an object is as private as the object.
      const writer = record.writer && (this.values.seal(record.key, record.writer) as Uint8Array);
      appended = this.inner.append({ type: record.type, key: record.key, value: sealed, expect: record.expect, ...(writer ? { writer } : {}) });
      const seq = appended.seq;
      // One writer: committed$ hands on the very object appended, not a decryption of it.
      if (seq !== undefined) {
        stampVersion(record.value, seq);
        this.appended.set(seq, { value: record.value, writer: record.writer });
        appended.durable.catch(() => this.appended.delete(seq));
      }
    }
    if (!this.inner.shared) return appended;
    // On a shared log: durable once committed$ handed it on, also when it waits behind another replica's entries.
    const durable = appended.durable.then(async (seq) => {
      await this.tail;
      return seq;
    });
    durable.catch(() => undefined);
    return { seq: undefined, durable };
  }

  private onCommitted(batch: LogEntry[]): LogEntry[] {
    const out = batch.map((e): LogEntry => {
      // Another replica's entry (shared log), read from storage: opened as a read one is.
      if (e.raw && !this.appended.has(e.seq)) return this.opened(e, this.values);
      this.noteNewest(e.seq);
      // A new state of the key replaces whatever could not be read.
      this.corrupt.delete(e.key);
      if (!this.appended.has(e.seq)) return e;
      const { value, writer } = this.appended.get(e.seq)!;
      this.appended.delete(e.seq);
      return { seq: e.seq, type: e.type, key: e.key, value, time: e.time, writer };
    });
    return out;
  }

  /** The state a replica that fell behind moves to: opened as a replay's entries are (a corrupt value becomes a delete). */
  private onRelisted(r: Relist): Relist {
    for (const seq of this.appended.keys()) if (seq <= r.seq) this.appended.delete(seq);
    const values = this.values;
    const entries = r.entries.map((e) => this.opened(e, values, true));
    this.noteNewest(r.seq);
    return { seq: r.seq, entries };
  }

  private noteNewest(seq: number): boolean {
    if (seq <= this.newest) return false;
    this.newest = seq;
    return true;
  }

  /** An entry as read from the inner log, opened; a corrupt one becomes a delete of its key (also when current: a relist's state). */
  private opened(e: LogEntry, values: StoredValues, current = false): LogEntry {
    const inOrder = this.noteNewest(e.seq) || current;
    // A plain value read from storage stays bytes (a lazy entry) when the key reads plain data.
    if (e.raw && !isBin(e.raw) && values.readsPlain(e.key)) {
      if (inOrder) this.corrupt.delete(e.key);
      return e;
    }
    try {
      const value = values.open(e.key, e.value);
      const writer = e.writer instanceof Uint8Array ? (values.open(e.key, e.writer) as LogEntry['writer']) : e.writer;
      if (inOrder) this.corrupt.delete(e.key);
      return value === e.value && writer === e.writer ? e : { seq: e.seq, type: e.type, key: e.key, value: stampVersion(value, e.seq), time: e.time, writer };
    } catch (err) {
      if (!(err instanceof TransformError)) throw err;
      // A past version read again: the reader gets the error, not a made-up state.
      if (!inOrder) throw new CorruptEntryError(e.key, e.seq, err.message);
      this.corrupt.set(e.key, { seq: e.seq, message: err.message, stored: e.value });
      return { seq: e.seq, type: 'delete', key: e.key, value: stubOf(e.key), time: e.time };
    }
  }

  async *read(from: number, to?: number, opts?: ReadOptions): AsyncIterable<LogEntry[]> {
    for await (const page of this.inner.read(from, to, opts)) {
      const values = this.values;
      if (values.needsPreparing) await values.prepare(page.filter(mayBeSealed));
      yield page.map((e) => this.opened(e, values));
    }
  }

  private async *opening(pages: AsyncIterable<(LogEntry | undefined)[]>): AsyncIterable<(LogEntry | undefined)[]> {
    for await (const page of pages) {
      const values = this.values;
      if (values.needsPreparing) await values.prepare(page.filter((e): e is LogEntry => e !== undefined && mayBeSealed(e)));
      yield page.map((e) => e && this.opened(e, values));
    }
  }

  /** The inner log's synchronous read, opened as get() opens: none while a KMS plugin must open data keys first (asynchronous). */
  get entrySync(): Log['entrySync'] {
    const read = this.inner.entrySync;
    return read && !this.values.needsPreparing ? (seq) => ((e) => e && this.opened(e, this.values))(read(seq)) : undefined;
  }

  async get(seq: number, key?: string): Promise<LogEntry | undefined> {
    const e = await this.inner.get(seq, key);
    if (!e) return e;
    const values = this.values;
    if (values.needsPreparing && mayBeSealed(e)) await values.prepare([e]);
    return this.opened(e, values);
  }

  compact(below: number, keep?: (seq: number) => boolean): Promise<void> {
    return this.inner.compact(below, keep);
  }

  private opens(values: StoredValues, key: string, stored: unknown): boolean {
    try {
      values.open(key, stored);
      return true;
    } catch (err) {
      if (err instanceof TransformError) return false;
      throw err;
    }
  }

  /**
   * A checkpoint holds every object of the view: its parts are framed and sealed whole (their layout
   * is the store's business) behind a small plain header that carries the corrupt objects, which
   * the view does not hold, as they are stored, so a restart from the checkpoint still knows them.
   */
  saveCheckpoint(cp: Checkpoint): Promise<void> {
    if (!this.values.encryptsAny && this.corrupt.size === 0) return this.inner.saveCheckpoint(cp);
    // Sealed as the inner log reads the parts, so its checks (closed, a seq past lastSeq) come first.
    return this.inner.saveCheckpoint({ seq: cp.seq, parts: this.sealedParts(cp.parts, this.values) });
  }

  private async *sealedParts(parts: Checkpoint['parts'], values: StoredValues): AsyncIterable<Uint8Array[]> {
    const framed: Uint8Array[] = [];
    for await (const pieces of parts) framed.push(...framePart(pieces));
    const corrupt = [...this.corrupt.entries()].map(([key, c]) => [key, c.seq, c.message, c.stored]);
    const header = packJson({ corrupt });
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(header.length, 0);
    yield [ENVELOPE, length, header, values.sealCheckpoint(Buffer.concat(framed))];
  }

  /**
   * The stored checkpoint, opened. One no configured key opens is no checkpoint: the store then
   * rebuilds the view from the log, entry by entry, each opened (or found corrupt) on its own.
   */
  async loadCheckpoint(): Promise<SavedCheckpoint | undefined> {
    const cp = await this.openCheckpoint();
    // The view starts from it: entries up to it are past versions from now on, never the replay's.
    if (cp) this.noteNewest(cp.seq);
    return cp;
  }

  private async openCheckpoint(): Promise<SavedCheckpoint | undefined> {
    const cp = await this.inner.loadCheckpoint();
    if (!cp) return cp;
    const parts = cp.parts[Symbol.asyncIterator]();
    const first = await parts.next();
    if (first.done) return { seq: cp.seq, parts: partsOf([]) };
    const bytes = partBuffer(first.value);
    if (bytes.length < ENVELOPE.length + 4 || !bytes.subarray(0, ENVELOPE.length).equals(ENVELOPE)) {
      return { seq: cp.seq, parts: prepend(bytes, parts) };
    }
    await parts.return?.();
    const at = ENVELOPE.length + 4;
    const end = at + bytes.readUInt32BE(ENVELOPE.length);
    const { corrupt } = unpackJson(bytes.subarray(at, end)) as { corrupt: [string, number, string, unknown][] };
    const values = this.values;
    await values.prepareCheckpoint(bytes.subarray(end));
    await values.prepare(corrupt.map(([key, , , value]) => ({ key, value })));
    let opened: Buffer;
    try {
      opened = values.openCheckpoint(bytes.subarray(end));
    } catch (err) {
      if (!(err instanceof TransformError)) throw err;
      return undefined;
    }
    for (const [key, seq, message, stored] of corrupt) {
      if (this.opens(values, key, stored)) {
        // Its key is configured again, but the checkpoint's view left the object out: rebuild the
        // view from the log instead, where its entry now opens.
        this.corrupt.clear();
        return undefined;
      }
      this.corrupt.set(key, { seq, message, stored });
    }
    return { seq: cp.seq, parts: partsOf(unframeParts(opened)) };
  }
}

async function* partsOf<T>(parts: readonly T[]): AsyncIterable<T> {
  yield* parts;
}

async function* prepend<T>(first: T, rest: AsyncIterator<T>): AsyncIterable<T> {
  try {
    yield first;
    for (let r = await rest.next(); !r.done; r = await rest.next()) yield r.value;
  } finally {
    await rest.return?.();
  }
}

/** msgpack bin (8, 16, 32): how a sealed value is stored; anything else is a plain value. */
const isBin = (raw: Buffer): boolean => raw[0] === 0xc4 || raw[0] === 0xc5 || raw[0] === 0xc6;
/** Whether an entry's value may be sealed; a lazy plain one is not decoded to find out. */
const mayBeSealed = (e: LogEntry): boolean => !e.raw || isBin(e.raw);

/** What a corrupt entry shows of its object: the name and namespace its key holds. */
function stubOf(key: string): { metadata: { name: string; namespace?: string } } {
  const suffix = key.slice(key.indexOf('/', key.indexOf('/') + 1) + 1);
  const slash = suffix.indexOf('/');
  const name = suffix.slice(slash + 1);
  return { metadata: slash > 0 ? { name, namespace: suffix.slice(0, slash) } : { name } };
}

/** The corrupt objects of a log, when it is one that decrypts. */
export const corruptObjectsOf = (log: Log): CorruptObjects | undefined => (log instanceof EncryptedLog ? log.corrupt : undefined);
