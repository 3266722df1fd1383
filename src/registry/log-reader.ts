/**
 * The past through the door, as /debug/timeline reads it: the newest writes of the log, every object
 * at a version, and every version of one key still in the log.
 */
import type { LogEntry } from '../log/log.js';
import { JsonLines } from '../log/msgpack-json.js';
import { splitKey } from '../api/object-keys.js';
import type { Store } from '../store/store.js';
import { LazyObject, type StoredObject } from '../store/stored-object.js';
import { collectionsInHistory, objectsAt, revisionsOf, versionsOf, type KeyVersion } from '../store/versions.js';
import { badRequest, expired, tooLargeResourceVersion } from './errors.js';

export { attribution, stampedTimeMs, type KeyVersion } from '../store/versions.js';
export type { LogEntry };

/** The log's newest entries, at most `window` of them, read page by page, and the versions around them. */
export function recentWrites(store: Store, window: number): { oldest: number; head: number; from: number; pages: AsyncIterable<LogEntry[]> } {
  const head = store.appliedSeq;
  const from = Math.max(store.log.firstSeq, head - window + 1);
  return { oldest: store.oldestVersion, head, from, pages: store.log.read(from, head) };
}

/** Every object at version rv, of every collection, in key order; 410 below the horizon, 504 past the head. */
export async function everyObjectAt(store: Store, rv: number): Promise<StoredObject[]> {
  if (rv < store.oldestVersion) throw expired(`too old resource version: ${rv} (${store.oldestVersion})`);
  if (rv > store.appliedSeq) throw tooLargeResourceVersion(rv, store.appliedSeq, 1);
  return objectsAt(store, rv, collectionsInHistory(store));
}

/** Every version of a key still in the log, oldest first; a key of no collection of this server is BadRequest. */
export async function versionsOfKey(store: Store, key: string): Promise<KeyVersion[]> {
  if (!store.view.history.has(splitKey(key).collection)) throw badRequest(`key: ${JSON.stringify(key)} names no collection of this server`);
  return versionsOf(store, key);
}

/** The log as /debug/log reads it: its bounds, its entries, and each key's revisions and versions. */
export interface LogReader {
  readonly oldestVersion: number;
  readonly appliedSeq: number;
  readonly log: { readonly firstSeq: number; read(from: number, to: number): AsyncIterable<LogEntry[]>; get(seq: number): Promise<LogEntry | undefined> };
  revisionsOf(key: string): number[];
  versionsOf(key: string): Promise<KeyVersion[]>;
  /** The objects of the collections at rv (in one namespace when prefix is 'ns/'), in key order, as stateLines writes them; without their managedFields when asked. */
  stateLines(rv: number, collections: readonly string[], prefix: string, dropManagedFields?: boolean): AsyncIterable<Buffer>;
  /** The collections that had objects at any version still readable, those of kinds served no more included. */
  collectionsInHistory(): string[];
}

/** A chunk of state lines is sent once it holds this much. */
const STATE_CHUNK = 1 << 20;

/**
 * The objects of the collections at rv as lines `<key>\t<JSON>\n` (a storage key holds no tab), in
 * chunks of about a megabyte, each a buffer of its own (a response may still hold the one before).
 * The JSON is written from the log's msgpack bytes without decoding them (log/msgpack-json.ts), as
 * a data folder's state is printed: the time-travel tools pass it through instead of rebuilding it
 * from Exact lists. 410 below the horizon, 504 past the head, as an Exact list answers.
 */
export async function* stateLines(store: Store, rv: number, collections: readonly string[], prefix: string, dropManagedFields = false): AsyncIterable<Buffer> {
  if (rv < store.oldestVersion) throw expired(`too old resource version: ${rv} (${store.oldestVersion})`);
  if (rv > store.appliedSeq) throw tooLargeResourceVersion(rv, store.appliedSeq, 1);
  const lines = new JsonLines(dropManagedFields);
  for (const s of await objectsAt(store, rv, collections, prefix)) {
    lines.addText(`${s.key}\t`);
    if (!(s instanceof LazyObject && !s.isDecoded && lines.add(s.raw, 0, s.raw.length, s.seq))) lines.addText(`${JSON.stringify(dropManagedFields ? withoutManagedFields(s.obj) : s.obj)}\n`);
    if (lines.length >= STATE_CHUNK) yield Buffer.from(lines.take());
  }
  if (lines.length > 0) yield Buffer.from(lines.take());
}

function withoutManagedFields<T extends { metadata?: { managedFields?: unknown } }>(o: T): T {
  if (o.metadata?.managedFields === undefined) return o;
  const { managedFields: _hidden, ...metadata } = o.metadata;
  return { ...o, metadata };
}

export function logReaderOf(store: Store): LogReader {
  return {
    get oldestVersion() {
      return store.oldestVersion;
    },
    get appliedSeq() {
      return store.appliedSeq;
    },
    log: store.log,
    revisionsOf: (key) => revisionsOf(store, key),
    versionsOf: (key) => versionsOf(store, key),
    stateLines: (rv, collections, prefix, dropManagedFields) => stateLines(store, rv, collections, prefix, dropManagedFields),
    collectionsInHistory: () => collectionsInHistory(store),
  };
}
