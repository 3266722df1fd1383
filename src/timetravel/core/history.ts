/**
 * What every time-travel command reads, from a data folder (../sources/data-dir.ts) or from a running server
 * (../sources/running-server.ts): the changes of the log in order, the state at a version, the versions of one object.
 * Both readers give the same answers, so each command is written once against this.
 */
import type { Author, LogEntry } from '../../log/log.js';
import type { KubeObject } from '../../api/types.js';
import type { VersionSpec } from './version-spec.js';
import { TimeTravelError } from './errors.js';
import type { KindStrategy } from '../../api/strategy.js';
import { matchesLabels, type Requirement } from '../../selectors/label-selector.js';
import { splitKey } from '../../api/object-keys.js';
import { stampedTimeMs } from '../../store/versions.js';

/** One write of the log, as a watch would report it. */
export interface Change {
  /** The log entry's sequence number: the resourceVersion of what it wrote. */
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** Storage key: `<group>/<plural>/<namespace>/<name>`. */
  key: string;
  object: KubeObject;
  /** ms since the epoch; see History.timesFromLog. undefined: nothing tells (no stamp yet). */
  time: number | undefined;
  /** Who wrote it, as the log kept it; undefined for an entry written before the log kept writers. */
  writer?: Author;
  /** The object as the history's first state holds it (a recording's start), not one of its entries: its write is not in the history. */
  start?: true;
}

/** An entry's writer, when the log kept one and it is open (not sealed bytes). */
export const writerOf = (e: { writer?: Author | Uint8Array }): Author | undefined => (e.writer instanceof Uint8Array ? undefined : e.writer);

export interface Stored {
  key: string;
  /** A getter where the object is still the log's bytes: decoded when read. */
  readonly object: KubeObject;
  /** Its stored msgpack bytes, where the reader has them: JSON lines are written from them, many into one buffer. */
  msgpack?(): Buffer | undefined;
  /** Its JSON as a server wrote it from its stored bytes (/debug/log/state), where the reader has it: printed as it is. */
  json?(): Buffer;
  /** The version that wrote it, where the reader knows it without decoding the object. */
  readonly seq?: number;
}

export interface History {
  /** The oldest version still readable (below it the log is compacted); 0 when nothing is. */
  readonly oldest: number;
  /** The newest version. */
  readonly head: number;
  /** true: nothing older than `oldest` was ever read (a recording starts there), rather than compacted away. */
  readonly startsAtOldest?: boolean;
  /**
   * true: times are the commit times the log keeps. false: the log (or the server's API) has none,
   * so each time is the newest one the server stamped into the object, to the second, never going
   * back along the log (../replay/pacing.ts).
   */
  readonly timesFromLog: boolean;
  /** The changes with from <= rv <= to, in log order. */
  changes(from: number, to: number, filter: Filter): AsyncIterable<Change>;
  /** Every object at version rv that the filter selects, in key order. */
  stateAt(rv: number, filter: StateFilter): Promise<Stored[]>;
  /**
   * stateAt a page at a time, where the reader can give the state without holding all of it: a
   * state of a million objects is printed as it is read. With reuse, the caller is done with a
   * page when it asks for the next one (the reader may then overwrite what the page's objects hold).
   */
  statePages?(rv: number, filter: StateFilter, reuse?: boolean): AsyncIterable<Stored[]>;
  /** Every version of one object still in the log, oldest first (its state at `oldest` first, if any). */
  versionsOf(key: string): Promise<Change[]>;
  /**
   * The log's entries from..to as read, in pages, their objects still the stored bytes where the
   * log has them: export writes those bytes as they are. Only a data folder has them.
   */
  storedEntries?(from: number, to: number): AsyncIterable<LogEntry[]>;
  /** One entry of the log by its version, its value still the stored bytes where the reader has them (a data folder, a recording). */
  entry?(seq: number): Promise<LogEntry | undefined>;
  /**
   * The entries at these versions (undefined where compacted), read beside a state being read: who
   * wrote its objects, and when (recording/write.ts). Only their writers and times are read.
   */
  writesAt?(seqs: readonly number[]): Promise<(LogEntry | undefined)[]>;
  /**
   * The log's records from..to as the log stores them (src/log/codec.ts), in pages: export copies
   * them as they are. Only a data folder read without encryption at rest has them (undefined otherwise).
   */
  storedRecords?(from: number, to: number): AsyncIterable<{ seqs: number[]; records: Buffer[] }> | undefined;
  /** The newest version committed at or before time (ms); 0 when none was. */
  versionAt(timeMs: number): Promise<number>;
  /** When version rv was committed (its guess, for an old log); undefined when nothing tells. */
  timeOf(rv: number): Promise<number | undefined>;
  /** Every change after `after` as it is committed, until the caller stops; without it, `log --follow` asks again and again. */
  follow?(after: number, filter: Filter): AsyncIterable<Change>;
  close(): Promise<void>;
}

/**
 * The state at rv a page at a time, each page done with when the next is asked for: from
 * statePages where the reader has it, else stateAt as one page.
 */
export async function* stateInPages(h: History, rv: number, filter: StateFilter): AsyncIterable<Stored[]> {
  if (h.statePages) yield* h.statePages(rv, filter, true);
  else yield await h.stateAt(rv, filter);
}

/** What a command reads: some kinds, one namespace, a name, a label selector. */
export interface Filter {
  /** The kinds read; none given: every kind the log holds, built-in or custom (kind-names.ts names them). */
  kinds?: readonly KindStrategy[];
  namespace?: string;
  name?: string;
  labels?: readonly Requirement[];
  /** Only changes of these types (none: every one); a server sends only those, other sources leave the rest to the command. */
  types?: readonly Change['type'][];
}

/** A state is read kind by kind: its kinds are named (custom-kinds.ts: everyKindAt). */
export interface StateFilter extends Filter {
  kinds: readonly KindStrategy[];
  /** Whether the objects are printed with metadata.managedFields: a server leaves them out of what it sends when not. */
  managedFields?: boolean;
}

export const collectionOfKind = (k: KindStrategy): string => `${k.group}/${k.plural}`;

const collectionSets = new WeakMap<readonly KindStrategy[], Set<string>>();

/** Whether the filter reads the collection (`<group>/<plural>`). */
export function takesCollection(filter: Filter, collection: string): boolean {
  if (!filter.kinds) return true;
  let set = collectionSets.get(filter.kinds);
  if (!set) collectionSets.set(filter.kinds, (set = new Set(filter.kinds.map(collectionOfKind))));
  return set.has(collection);
}

/**
 * Whether the object at key passes the filter's namespace, name and labels (the kind is the
 * caller's). object is asked for only when there is a label selector: without one, a stored object
 * need not be decoded.
 */
export function selects(filter: Filter, key: string, object: () => KubeObject): boolean {
  const { suffix } = splitKey(key);
  const slash = suffix.indexOf('/');
  if (filter.namespace !== undefined && suffix.slice(0, slash) !== filter.namespace) return false;
  if (filter.name !== undefined && suffix.slice(slash + 1) !== filter.name) return false;
  return !filter.labels || matchesLabels(filter.labels, object().metadata?.labels);
}

export const takesKind = (filter: Filter, key: string): boolean => takesCollection(filter, splitKey(key).collection);

/** The times stamped into objects, made to never go back along the log: the guess for an old log. */
export class StampClock {
  private newest: number | undefined;

  timeOf(object: unknown): number | undefined {
    const t = stampedTimeMs(object);
    if (t !== undefined) this.newest = Math.max(this.newest ?? t, t);
    return this.newest;
  }
}

/** The version a spec names, checked against what the history holds (the horizon, the head). */
export async function resolveVersion(history: History, flag: string, spec: VersionSpec): Promise<number> {
  if ('head' in spec) return checkVersion(history, flag, history.head);
  if ('timeMs' in spec) {
    const at = new Date(spec.timeMs).toISOString();
    const rv = await history.versionAt(spec.timeMs);
    if (rv === 0) throw new TimeTravelError(`${flag} ${at}: nothing was committed at or before then`);
    // A time after the newest commit names a version not written yet, as a number past the head does.
    const headTime = rv === history.head ? await history.timeOf(rv) : undefined;
    if (headTime !== undefined && spec.timeMs > headTime)
      throw new TimeTravelError(`${flag} ${at}: not written yet: the newest version is ${history.head}, committed at ${new Date(headTime).toISOString()}`);
    return checkVersion(history, flag, Math.max(rv, history.oldest));
  }
  return checkVersion(history, flag, spec.rv);
}

function checkVersion(history: History, flag: string, rv: number): number {
  if (rv === 0 && history.oldest === 0) throw new TimeTravelError(`${flag} 0: before the first entry: the oldest version is 1`);
  if (rv < history.oldest && history.startsAtOldest) throw new TimeTravelError(`${flag} ${rv}: before the recording: it starts with the state at version ${history.oldest}`);
  if (rv < history.oldest) throw new TimeTravelError(`${flag} ${rv}: gone (410): the log is compacted below it; the oldest version kept is ${history.oldest}`);
  if (rv > history.head) throw new TimeTravelError(`${flag} ${rv}: not written yet: the newest version is ${history.head}`);
  return rv;
}
