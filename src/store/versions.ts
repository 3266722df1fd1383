/**
 * Reads across time that the time-travel tools and the /debug/timeline page share: every object of
 * some collections at a version, every version of one key still in the log, when a write happened,
 * and who made it.
 */
import type { LogEntry } from '../log/log.js';
import type { KubeObject } from '../api/types.js';
import { splitKey } from '../api/object-keys.js';
import { listObjects } from './list.js';
import type { HistorySource, VersionedView } from './sources.js';
import type { StoredObject } from './stored-object.js';

/** Every object of the collections at version rv (in one namespace when prefix is 'ns/'), in key order. */
export async function objectsAt(store: VersionedView, rv: number, collections: readonly string[], prefix = ''): Promise<StoredObject[]> {
  const out: StoredObject[] = [];
  // A loop, not push(...items): half a million arguments overflow the stack.
  for (const collection of [...collections].sort()) for (const s of (await listObjects(store, { collection, prefix, atSeq: rv })).items) out.push(s);
  return out;
}

/** The collections that had objects at any version still readable (deleted ones included). */
export const collectionsInHistory = (store: VersionedView): string[] => [...store.view.history.keys()].sort();

/** The revisions of a key still indexed, oldest first (negative: a delete). */
export function revisionsOf(store: VersionedView, key: string): number[] {
  const { collection, suffix } = splitKey(key);
  return store.view.slotsOf(collection)?.get(suffix)?.list() ?? [];
}

export interface KeyVersion {
  entry: LogEntry;
  /** As a watch reports it: a put after nothing (or after a delete) is ADDED. */
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
}

/** Every version of a key the log still holds, oldest first. */
export async function versionsOf(store: HistorySource, key: string): Promise<KeyVersion[]> {
  const out: KeyVersion[] = [];
  let before: number | undefined;
  for (const r of revisionsOf(store, key)) {
    const entry = await store.log.get(Math.abs(r), key);
    if (entry) out.push({ entry, type: r < 0 ? 'DELETED' : before !== undefined && before > 0 ? 'MODIFIED' : 'ADDED' });
    before = r;
  }
  return out;
}

const parseTime = (t: unknown): number | undefined => {
  if (typeof t !== 'string') return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
};

/**
 * The newest server-stamped time an object carries (ms since the epoch), if any: creation, deletion
 * and managedFields times, to the second. What a log written before it kept commit times can tell
 * of when a write happened. Client-set times (an Event's eventTime) are not used: they are whatever
 * the client's clock said.
 */
export function stampedTimeMs(value: unknown): number | undefined {
  const metadata = (value as { metadata?: Record<string, unknown> } | null)?.metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const managed = Array.isArray(metadata.managedFields) ? (metadata.managedFields as { time?: unknown }[]) : [];
  const times = [metadata.creationTimestamp, metadata.deletionTimestamp, ...managed.map((m) => m?.time)].map(parseTime).filter((t) => t !== undefined);
  return times.length > 0 ? Math.max(...times) : undefined;
}

/** The managedFields entry an object's newest write (since before, when known) changed: its manager and operation. */
export function attribution(object: KubeObject, before: KubeObject | undefined): { manager: string; operation: string } | undefined {
  type Entry = { manager?: string; operation?: string; time?: string };
  const entries = (Array.isArray(object.metadata?.managedFields) ? object.metadata.managedFields : []) as Entry[];
  if (entries.length === 0) return undefined;
  const old = new Set(((before?.metadata?.managedFields ?? []) as unknown[]).map((e) => JSON.stringify(e)));
  // The entry this write changed or added; without the version before, or when none did (a write
  // that changed no fields of any manager), the one most recently stamped.
  const changed = before ? entries.find((e) => !old.has(JSON.stringify(e))) : undefined;
  const pick = changed ?? [...entries].sort((a, b) => String(b.time ?? '').localeCompare(String(a.time ?? '')))[0];
  return { manager: pick.manager ?? '<unknown>', operation: pick.operation ?? '<unknown>' };
}
