/**
 * A data folder's answers read through the log's version index (src/log/version-index.ts): the
 * versions of one object, and the state of some kinds at a version, each from the index's rows for
 * those keys and then only the entries they name. Nothing scans the log: what a read costs is what
 * it returns (and, for a state, the index rows of the kinds asked for).
 */
import { isPackedMap } from '../../log/codec.js';
import type { Log, LogEntry, VersionIndex } from '../../log/log.js';
import type { KindStrategy } from '../../api/strategy.js';
import { storedOf, type StoredObject } from '../../store/stored-object.js';
import type { KeyVersion } from '../../store/versions.js';
import { TimeTravelError } from '../core/errors.js';
import { collectionOfKind, type StateFilter } from '../core/history.js';

/** An object's versions are read as one range of the log when it spans at most this many entries per version. */
const SPAN_PER_VERSION = 8;
/** Gets of entries sent to LevelDB at once (its thread pool answers them side by side). */
const GETS_AT_ONCE = 64;

/** A value encryption at rest sealed (msgpack binary where an object's map would be): only the store opens it. */
const sealed = (e: LogEntry): boolean => (e.raw ? !isPackedMap(e.raw) : e.value instanceof Uint8Array);

/** As the store's reader says it of an entry encryption at rest did not open (data-dir.ts checkOpened). */
const sealedError = (e: LogEntry) =>
  new TimeTravelError(`log entry ${e.seq} (${e.key}) cannot be read: it is encrypted at rest; an encrypted log needs the --encryption-provider-config it was written with`);

/**
 * The log's entries at seqs (ascending) by sequence number. Close together (an object written
 * often: a controller's status updates), one read of the range between the first and the last is
 * far cheaper than a get each (a call to LevelDB's thread pool each); far apart, gets, a batch at
 * a time.
 */
export async function entriesAt(log: Log, seqs: readonly number[]): Promise<Map<number, LogEntry>> {
  const out = new Map<number, LogEntry>();
  if (seqs.length === 0) return out;
  const first = seqs[0];
  const last = seqs[seqs.length - 1];
  if (first >= log.firstSeq && last - first < SPAN_PER_VERSION * seqs.length) {
    const wanted = new Set(seqs);
    for await (const page of log.read(first, last)) for (const e of page) if (wanted.has(e.seq)) out.set(e.seq, e);
    return out;
  }
  for (let i = 0; i < seqs.length; i += GETS_AT_ONCE) {
    const batch = seqs.slice(i, i + GETS_AT_ONCE);
    (await Promise.all(batch.map((seq) => log.get(seq)))).forEach((e, n) => e && out.set(batch[n], e));
  }
  return out;
}

/**
 * Every version of key still in the log, oldest first, as the store's versionsOf gives them: below
 * the horizon only its state there (the newest version below it, when a put). undefined when a
 * version is sealed (only the store, through encryption at rest, reads it).
 */
export async function indexedVersions(log: Log, index: VersionIndex, key: string): Promise<KeyVersion[] | undefined> {
  const all = await index.versionsOf(key);
  const below = all.filter((v) => Math.abs(v) < log.firstSeq);
  const start = below.length > 0 && below[below.length - 1] > 0 ? [below[below.length - 1]] : [];
  const revisions = [...start, ...all.filter((v) => Math.abs(v) >= log.firstSeq)];
  const entries = await entriesAt(
    log,
    revisions.map((r) => Math.abs(r)),
  );
  const out: KeyVersion[] = [];
  let before: number | undefined;
  for (const r of revisions) {
    const entry = entries.get(Math.abs(r));
    if (entry && sealed(entry)) return undefined;
    if (entry) out.push({ entry, type: r < 0 ? 'DELETED' : before !== undefined && before > 0 ? 'MODIFIED' : 'ADDED' });
    before = r;
  }
  return out;
}

/**
 * The keys to look up for the filter in one kind: the object's own key when the filter names one
 * (and its namespace, for a namespaced kind), else every key under the kind and namespace.
 */
function keysOf(kind: KindStrategy, filter: StateFilter): { key: string } | { prefix: string } {
  const collection = collectionOfKind(kind);
  const namespace = kind.namespaced ? filter.namespace : '';
  if (filter.name !== undefined && namespace !== undefined) return { key: `${collection}/${namespace}/${filter.name}` };
  return { prefix: `${collection}/${namespace === undefined ? '' : `${namespace}/`}` };
}

/** Whether the filter names one object: one kind, a name and, for a namespaced kind, its namespace. */
export const namesOneObject = (filter: StateFilter): boolean => filter.kinds.length === 1 && filter.name !== undefined && (!filter.kinds[0].namespaced || filter.namespace !== undefined);

/** The newest version at or before rv of one key, as index.liveAt gives keys: none when it is deleted then. */
async function* oneKeyAt(index: VersionIndex, key: string, rv: number): AsyncIterable<{ key: string; seq: number }[]> {
  const newest = (await index.versionsOf(key)).filter((v) => Math.abs(v) <= rv).pop();
  if (newest !== undefined && newest > 0) yield [{ key, seq: newest }];
}

/**
 * The objects of the filter's kinds at rv (rv >= the log's firstSeq - 1), in key order (kinds in
 * collection order), a page at a time: each page's keys from the index, then their entries. The
 * caller applies the filter's namespace, name and labels. Throws on a sealed value.
 */
export async function* indexedState(log: Log, index: VersionIndex, rv: number, filter: StateFilter): AsyncIterable<StoredObject[]> {
  const kinds = [...filter.kinds].sort((a, b) => (collectionOfKind(a) < collectionOfKind(b) ? -1 : collectionOfKind(a) > collectionOfKind(b) ? 1 : 0));
  for (const kind of kinds) {
    const wanted = keysOf(kind, filter);
    const live = 'key' in wanted ? oneKeyAt(index, wanted.key, rv) : index.liveAt(wanted.prefix, rv);
    for await (const page of live) {
      const entries = await entriesAt(
        log,
        page.map((l) => l.seq).sort((a, b) => a - b),
      );
      const out: StoredObject[] = [];
      for (const { key, seq } of page) {
        const e = entries.get(seq);
        if (!e) continue;
        if (sealed(e)) throw sealedError(e);
        out.push(storedOf(e, key, seq));
      }
      yield out;
    }
  }
}
