/**
 * What every time-travel command reads, from a data folder (data-dir.ts) or from a running server
 * (server.ts): the changes of the log in order, the state at a version, the versions of one object.
 * Both readers give the same answers, so each command is written once against this.
 */
import type { LogEntry } from '../../src/log/log.js';
import type { KubeObject } from '../../src/resources/types.js';
import { CommandError } from '../../src/cli/flags.js';
import { kinds } from '../../src/resources/registry.js';
import type { KindStrategy } from '../../src/resources/strategy.js';
import { matchesLabels, parseLabelSelector, SelectorError, type Requirement } from '../../src/selectors/label-selector.js';
import { splitKey } from '../../src/store/keys.js';
import { stampedTimeMs } from '../../src/store/versions.js';

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
}

export interface Stored {
  key: string;
  /** A getter where the object is still the log's bytes: decoded when read. */
  readonly object: KubeObject;
  /** Its stored msgpack bytes, where the reader has them: JSON lines are written from them, many into one buffer. */
  msgpack?(): Buffer | undefined;
  /** The version that wrote it, where the reader knows it without decoding the object. */
  readonly seq?: number;
}

export interface History {
  /** The oldest version still readable (below it the log is compacted); 0 when nothing is. */
  readonly oldest: number;
  /** The newest version. */
  readonly head: number;
  /**
   * true: times are the commit times the log keeps. false: the log (or the server's API) has none,
   * so each time is the newest one the server stamped into the object, to the second, never going
   * back along the log (replay-pacing.ts).
   */
  readonly timesFromLog: boolean;
  /** The changes with from <= rv <= to, in log order. */
  changes(from: number, to: number, filter: Filter): AsyncIterable<Change>;
  /** Every object at version rv that the filter selects, in key order. */
  stateAt(rv: number, filter: Filter): Promise<Stored[]>;
  /**
   * stateAt a page at a time, where the reader can give the state without holding all of it: a
   * state of a million objects is printed as it is read. With reuse, the caller is done with a
   * page when it asks for the next one (the reader may then overwrite what the page's objects hold).
   */
  statePages?(rv: number, filter: Filter, reuse?: boolean): AsyncIterable<Stored[]>;
  /** Every version of one object still in the log, oldest first (its state at `oldest` first, if any). */
  versionsOf(key: string): Promise<Change[]>;
  /**
   * The log's entries from..to as read, in pages, their objects still the stored bytes where the
   * log has them: export writes those bytes as they are. Only a data folder has them.
   */
  storedEntries?(from: number, to: number): AsyncIterable<LogEntry[]>;
  /** The newest version committed at or before time (ms); 0 when none was. */
  versionAt(timeMs: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * The state at rv a page at a time, each page done with when the next is asked for: from
 * statePages where the reader has it, else stateAt as one page.
 */
export async function* stateInPages(h: History, rv: number, filter: Filter): AsyncIterable<Stored[]> {
  if (h.statePages) yield* h.statePages(rv, filter, true);
  else yield await h.stateAt(rv, filter);
}

/** A mistake the user can fix: said in one line, exit status 1, no stack trace. */
export class TimeTravelError extends CommandError {}

/** What a command reads: some kinds, one namespace, a name, a label selector. */
export interface Filter {
  kinds: readonly KindStrategy[];
  namespace?: string;
  name?: string;
  labels?: readonly Requirement[];
}

export const collectionOfKind = (k: KindStrategy): string => `${k.group}/${k.plural}`;
const byCollection = new Map(kinds.map((k) => [collectionOfKind(k), k]));

/** The kind a storage key belongs to. */
export function kindOfKey(key: string): KindStrategy | undefined {
  return byCollection.get(splitKey(key).collection);
}

/** A kind named as kubectl takes it: plural, singular, Kind or short name, with or without its group. */
export function resolveKind(text: string): KindStrategy {
  const [name, ...group] = text.toLowerCase().split('.');
  const g = group.join('.');
  const found = kinds.find(
    (k) => (g === '' || k.group === g) && [k.plural, k.singular, k.kind.toLowerCase(), ...(k.shortNames ?? [])].includes(name),
  );
  if (!found) throw new TimeTravelError(`unknown kind ${JSON.stringify(text)}: orchd serves ${kinds.map((k) => k.plural).join(', ')}`);
  return found;
}

export function makeFilter(opts: { kind?: string[]; namespace?: string; name?: string; selector?: string }): Filter {
  let labels: Requirement[] | undefined;
  try {
    labels = opts.selector === undefined ? undefined : parseLabelSelector(opts.selector);
  } catch (err) {
    if (err instanceof SelectorError) throw new TimeTravelError(`--selector ${JSON.stringify(opts.selector)}: ${err.message}`);
    throw err;
  }
  const named = (opts.kind ?? []).flatMap((k) => k.split(',')).filter((k) => k !== '');
  return { kinds: named.length > 0 ? named.map(resolveKind) : kinds, namespace: opts.namespace, name: opts.name, labels };
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

export const takesKind = (filter: Filter, key: string): boolean => {
  const k = kindOfKey(key);
  return k !== undefined && filter.kinds.includes(k);
};

/** The times stamped into objects, made to never go back along the log: the guess for an old log. */
export class StampClock {
  private newest: number | undefined;

  timeOf(object: unknown): number | undefined {
    const t = stampedTimeMs(object);
    if (t !== undefined) this.newest = Math.max(this.newest ?? t, t);
    return this.newest;
  }
}

/** A version given as a number (a resourceVersion) or a time (RFC 3339, e.g. 2026-11-26T02:14:00Z). */
export type VersionSpec = { rv: number } | { timeMs: number };

/** A version as a flag's text gives it: a resourceVersion or an RFC 3339 time (the flag table names the flag in its error). */
export function parseVersionSpec(text: string): VersionSpec {
  if (/^\d+$/.test(text)) {
    const rv = Number(text);
    if (!Number.isSafeInteger(rv)) throw new Error(`${text}: not a resourceVersion`);
    return { rv };
  }
  const ms = /^\d{4}-\d\d-\d\d/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new Error(`${JSON.stringify(text)}: neither a resourceVersion (a number) nor a time (RFC 3339, e.g. 2026-11-26T02:14:00Z)`);
  return { timeMs: ms };
}

/** The version a spec names, checked against what the history holds (the horizon, the head). */
export async function resolveVersion(history: History, flag: string, spec: VersionSpec): Promise<number> {
  if ('timeMs' in spec) {
    const rv = await history.versionAt(spec.timeMs);
    if (rv === 0) throw new TimeTravelError(`${flag} ${new Date(spec.timeMs).toISOString()}: nothing was committed at or before then`);
    return checkVersion(history, flag, Math.max(rv, history.oldest));
  }
  return checkVersion(history, flag, spec.rv);
}

function checkVersion(history: History, flag: string, rv: number): number {
  if (rv < history.oldest || (rv === 0 && history.oldest === 0)) {
    throw new TimeTravelError(`${flag} ${rv}: gone (410): the log is compacted below it; the oldest version kept is ${Math.max(history.oldest, 1)}`);
  }
  if (rv > history.head) throw new TimeTravelError(`${flag} ${rv}: not written yet: the newest version is ${history.head}`);
  return rv;
}

/** The versions from..to a command reads: by default from the oldest readable to the head. */
export async function resolveRange(h: History, from: VersionSpec | undefined, to: VersionSpec | undefined): Promise<{ from: number; to: number }> {
  const f = from === undefined ? Math.max(h.oldest, 1) : await resolveVersion(h, '--from', from);
  const t = to === undefined ? h.head : await resolveVersion(h, '--to', to);
  if (f > t) throw new TimeTravelError(`--from ${f} is after --to ${t}`);
  return { from: f, to: t };
}
