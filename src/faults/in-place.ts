/**
 * Faults among the writes: an object's history with the faults that concerned it placed after the
 * write they followed (each fault carries the head resourceVersion when it acted), so a failing
 * test's history says which fault came before the bug.
 */
import type { InjectedFault } from './journal.js';

export interface FaultHistoryEntry {
  type: 'FAULT';
  /** The newest version applied when the fault acted: it came after that write. */
  resourceVersion: string;
  fault: InjectedFault;
}

/**
 * Whether a fault concerns one object of a resource (`plural` or `plural.group`): a request that
 * named it, or one on its collection that named none (a list, a watch, a create answered before
 * its name was known) in its namespace or across all.
 */
export function concerns(f: InjectedFault, resource: string, namespace: string, name: string): boolean {
  const r = f.request;
  if (r.resource !== resource) return false;
  if (r.name) return r.name === name && (r.namespace ?? '') === namespace;
  return !r.namespace || r.namespace === namespace;
}

/**
 * Entries (oldest first) with the faults merged in: a fault after every entry at or before its
 * version. A fault on the collection from before the object's first version kept is not its history.
 */
export function faultsInPlace<E extends { resourceVersion: string }>(entries: readonly E[], faults: readonly InjectedFault[]): (E | FaultHistoryEntry)[] {
  const out: (E | FaultHistoryEntry)[] = [];
  const from = entries.length > 0 ? Number(entries[0].resourceVersion) : Infinity;
  let i = 0;
  for (const f of faults) {
    if (!f.request.name && Number(f.resourceVersion) < from) continue;
    const at = Number(f.resourceVersion);
    while (i < entries.length && Number(entries[i].resourceVersion) <= at) out.push(entries[i++]);
    out.push({ type: 'FAULT', resourceVersion: f.resourceVersion, fault: f });
  }
  while (i < entries.length) out.push(entries[i++]);
  return out;
}
