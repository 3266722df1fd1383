/**
 * The faults a server injected (src/faults/journal.ts: faults.jsonl beside the log in its data
 * folder), for `orchd log --faults`: each shown after the write it followed (a fault takes no
 * resourceVersion; it carries the newest one applied when it acted).
 */
import { readFaultJournal, type InjectedFault } from '../../faults/journal.js';
import type { Refused } from './audit-events.js';
import { collectionOfKind, type Change, type StateFilter } from './history.js';

/** A fault as a row beside the changes: printed as `FAULT <fault>` after version afterRv. */
export type Faulted = Refused & { fault: string; afterRv: number };

/** The collection (`group/plural`) of a fault's resource (`plural.group`, or `plural` in the core group). */
const collectionOf = (resource: string): string => {
  const dot = resource.indexOf('.');
  return dot < 0 ? `/${resource}` : `${resource.slice(dot + 1)}/${resource.slice(0, dot)}`;
};

/** The faults of the data folder that the filter takes (kind, namespace, name), versions from..to. */
export function faultsIn(dataDir: string, filter: StateFilter, from: number, to: number): Faulted[] {
  const wanted = new Set(filter.kinds.map(collectionOfKind));
  return readFaultJournal(dataDir)
    .filter((f) => {
      const rv = Number(f.resourceVersion);
      const r = f.request;
      return (
        rv >= from && rv <= to && wanted.has(collectionOf(r.resource)) && (filter.namespace === undefined || r.namespace === filter.namespace) && (filter.name === undefined || r.name === filter.name)
      );
    })
    .map(row);
}

const row = (f: InjectedFault): Faulted => {
  const r = f.request;
  const status = /^status:(\d+)$/.exec(f.fault);
  return {
    refused: true,
    time: Date.parse(f.time),
    verb: r.verb,
    user: r.user,
    key: `${collectionOf(r.resource)}/${r.namespace ?? ''}/${r.name ?? ''}`,
    code: status ? Number(status[1]) : 0,
    reason: f.rule,
    message: `${f.rule}: ${f.fault}`,
    fault: f.fault,
    afterRv: Number(f.resourceVersion),
  };
};

/** The changes with the faults after the change they followed. */
export async function* withFaults<C extends Change | Refused>(changes: AsyncIterable<C>, faults: Faulted[]): AsyncIterable<C | Faulted> {
  let i = 0;
  for await (const c of changes) {
    if ('rv' in c) while (i < faults.length && faults[i].afterRv < c.rv) yield faults[i++];
    yield c;
  }
  while (i < faults.length) yield faults[i++];
}
