/**
 * The read side of the door: every get, list and watch, and the committed changes controllers
 * follow, go through here and the read plan, never to the store directly. It takes the kind on every
 * call, so a kind added while the server runs is read like any other.
 */
import { filter, map } from 'rxjs';
import type { Observable } from 'rxjs';
import type { CorruptObject } from '../log/encryption/index.js';
import type { LogEntry } from '../log/log.js';
import { qualified } from '../api/qualified.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { ContinueTokens } from '../store/continue-token.js';
import { collectionOf, storageKey, suffixOf } from '../api/object-keys.js';
import type { Sample } from '../observability/samples.js';
import { storeSamples } from '../store/samples.js';
import type { Store } from '../store/store.js';
import type { Change, ChangeType } from '../store/change.js';
import { objectJson, peekObject, storedJsonAt, transientJson, undecodedBytes, type StoredObject } from '../store/stored-object.js';
import { msgpackPath, stringsAt } from '../log/msgpack-path.js';
import { valueAtPath } from '../resources/crd/rule-field-path.js';
import { planOf, settle, type VersionRequest } from './consistency.js';
import { corruptObject, expired, notFound, StoreError, tooLargeResourceVersion, type RegistryError } from './errors.js';
import { everyObjectAt, logReaderOf, recentWrites, versionsOfKey, type KeyVersion, type LogReader } from './log-reader.js';
import { listPage, type Page, type PageRequest } from './list-page.js';
import { prepareWatch, type OpenWatch, type WatchQuery } from './watch.js';

/** What the door hands out: stored versions and committed changes, whose bytes are asked of the door (below) or of the change. */
export type { Change, ChangeType, StoredObject };

/** A path of map keys into an object, for ObjectReads.stringsOf: the keys, and their bytes as stored objects hold them. */
export interface FieldPath {
  readonly keys: readonly string[];
  readonly bytes: readonly Buffer[];
}
export const fieldPath = (...keys: string[]): FieldPath => ({ keys, bytes: msgpackPath(...keys) });
const bytesOfPath = (p: FieldPath) => p.bytes;

export class ObjectReads {
  constructor(
    protected readonly store: Store,
    private readonly tokens: ContinueTokens,
  ) {}

  key(kind: KindStrategy, namespace: string | undefined, name: string): string {
    return storageKey(kind, kind.namespaced ? (namespace ?? '') : '', name);
  }

  /** The newest committed state of an object, or undefined (absent, or stored but unreadable). */
  current(kind: KindStrategy, namespace: string | undefined, name: string): StoredObject | undefined {
    return this.store.get(this.key(kind, namespace, name));
  }

  /** The newest committed state of a storage key (a controller's index holds keys), or undefined. */
  currentAt(key: string): StoredObject | undefined {
    return this.store.get(key);
  }

  /** The newest committed state of an object: NotFound when absent, CorruptObject when it cannot be read. */
  get(kind: KindStrategy, namespace: string | undefined, name: string): StoredObject {
    const key = this.key(kind, namespace, name);
    const s = this.store.get(key);
    if (!s) throw this.corruptError(key) ?? notFound(qualified(kind, name));
    return s;
  }

  /**
   * A GET: resourceVersion unset, the newest state, consistent; 0 any (the newest too); N not older
   * than N (waits briefly for the view). With resourceVersionMatch=Exact (an orchd extension:
   * Kubernetes' GetOptions has no match) the object as it was at N, for any N since the horizon.
   */
  async read(kind: KindStrategy, namespace: string | undefined, name: string, v: VersionRequest): Promise<StoredObject> {
    const plan = planOf(this.store, v);
    const tooOld = (seq: number) => expired(`too old resource version: ${seq} (${this.store.oldestVersion})`);
    switch (plan.kind) {
      case 'tooLarge':
        throw tooLargeResourceVersion(plan.seq, this.store.appliedSeq, 0);
      case 'expired':
        throw tooOld(plan.seq);
      case 'at': {
        const s = await this.store.getAt(this.key(kind, namespace, name), plan.seq).catch((err: unknown) => {
          // Overtaken by a compaction while it read.
          throw err instanceof StoreError && err.code === 'COMPACTED' ? tooOld(plan.seq) : err;
        });
        if (!s) throw notFound(qualified(kind, name));
        return s;
      }
      default:
        await settle(this.store, plan);
    }
    return this.get(kind, namespace, name);
  }

  /** Committed objects of a kind, one namespace or all, in key order, starting after a key (unpaged, current). */
  list(kind: KindStrategy, namespace: string | undefined, after?: string): IterableIterator<StoredObject> {
    return this.store.list(collectionOf(kind), kind.namespaced && namespace ? suffixOf(namespace, '') : '', after);
  }

  /** A LIST: selectors, pages, and reads at a version (list-page.ts). */
  listPage(kind: KindStrategy, namespace: string | undefined, req: PageRequest): Promise<Page> {
    return listPage(this.store, this.tokens, kind, namespace, req);
  }

  /** A WATCH, prepared: refused now if it cannot start, started per connection (watch.ts). */
  watch(kind: KindStrategy, namespace: string | undefined, q: WatchQuery): OpenWatch {
    return prepareWatch(this.store, kind, namespace, q);
  }

  /**
   * The committed changes of a kind (every kind: none given), in order, one array per commit batch
   * that touched it, once the views have applied them: what controllers follow. Watchers are fed by
   * the watch engine's per-collection streams instead.
   */
  changes(kind?: KindStrategy): Observable<Change[]> {
    if (!kind) return this.store.changes$;
    const prefix = `${collectionOf(kind)}/`;
    return this.store.changes$.pipe(
      map((batch) => batch.filter((c) => c.key.startsWith(prefix))),
      filter((batch) => batch.length > 0),
    );
  }

  /** The namespaces holding objects of a kind, each once. */
  namespacesOf(kind: KindStrategy): IterableIterator<string> {
    return this.store.namespaces(collectionOf(kind));
  }

  /**
   * Every key held now, taken at once; each is read when the walk reaches it (its state then, skipped
   * once gone). A controller indexing everything walks it a slice at a time off the request path.
   */
  *everyKey(): IterableIterator<StoredObject> {
    const view = this.store.view;
    const snapshot = Array.from(view.collections, ([collection, keys]) => ({ collection, suffixes: keys.toArray() }));
    for (const { collection, suffixes } of snapshot) {
      const slots = view.slotsOf(collection);
      for (const suffix of suffixes) {
        const s = slots?.get(suffix)?.cur;
        if (s) yield s;
      }
    }
  }

  /*
   * A stored object the door handed out, read. Its JSON is made once per version and shared by every
   * reader; the store decides when it is made and kept (store/stored-object.ts), the rooms above
   * only ask for it here.
   */

  /** s as JSON at apiVersion: its shared encoding, else re-stamped (an item of a list). */
  json(s: StoredObject, apiVersion: string): string | Buffer {
    return objectJson(s, apiVersion);
  }

  /** The shared JSON of s when it is stored at apiVersion; undefined when it must be made otherwise (re-stamped, a Table). */
  sharedJson(s: StoredObject, apiVersion: string): Buffer | undefined {
    return storedJsonAt(s, apiVersion);
  }

  /** s as JSON at apiVersion for one watcher's initial events, kept by nothing (a streaming list of every object keeps no copy). */
  transientJson(s: StoredObject, apiVersion: string): string | Buffer {
    return transientJson(s, apiVersion);
  }

  /** The object of s for a one-off look (a background scan of every object): one not yet read is decoded for the caller and stays bytes in the view. */
  peek(s: StoredObject): KubeObject {
    return peekObject(s);
  }

  /**
   * The string at each path in s, else undefined: read from its bytes when nothing has decoded it
   * (log/msgpack-path.ts), so a background scan of every object builds no tree, else from its object.
   */
  stringsOf(s: StoredObject, paths: readonly FieldPath[]): (string | undefined)[] {
    const raw = undecodedBytes(s);
    if (raw) return stringsAt(raw, paths.map(bytesOfPath));
    const obj = peekObject(s);
    return paths.map((p) => {
      const v = valueAtPath(obj, p.keys);
      return typeof v === 'string' ? v : undefined;
    });
  }

  /** The bytes s is still held as, when nothing has decoded it: a scan looks for a field's name in them instead of decoding. */
  undecodedBytes(s: StoredObject): Buffer | undefined {
    return undecodedBytes(s);
  }

  /** The stored state of key that cannot be read (encryption at rest: no provider opens it), if so. */
  corrupt(key: string): CorruptObject | undefined {
    return this.store.corrupt(key);
  }

  protected corruptError(key: string): RegistryError | undefined {
    const c = this.corrupt(key);
    return c && corruptObject(key, c.seq, c.message);
  }

  /** The log itself, read only (/debug/log: the time-travel tools over --server). */
  logReader(): LogReader {
    return logReaderOf(this.store);
  }

  /** The newest writes of the log (/debug/timeline). */
  recentWrites(window: number): { oldest: number; head: number; from: number; pages: AsyncIterable<LogEntry[]> } {
    return recentWrites(this.store, window);
  }

  /** Every object at a version, of every kind. */
  everyObjectAt(rv: number): Promise<StoredObject[]> {
    return everyObjectAt(this.store, rv);
  }

  /** Every version of a storage key still in the log. */
  versionsOf(key: string): Promise<KeyVersion[]> {
    return versionsOfKey(this.store, key);
  }

  /** What the store shows /metrics at each scrape: objects and watchers by resource, the log's head, the history kept. */
  samples(kinds: readonly KindStrategy[]): Sample[] {
    return storeSamples(this.store, kinds);
  }
}
