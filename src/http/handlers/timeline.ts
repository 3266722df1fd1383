/**
 * /debug/timeline: a page on a running (or replaying) orchd that plots writes per second by kind over
 * time, shows the state at a moment clicked on the plot, and an object's history with diffs. Its
 * data comes from three JSON reads beside it:
 *
 *   /debug/timeline/writes?buckets=N   the newest WINDOW writes, counted by resource and by verb in N
 *                                      time buckets, and the fork points of a forked data folder
 *   /debug/timeline/changes?from=RV&to=RV&resource=&namespace=&name=&writer=
 *                                      the writes of that span (deletes too), each with its object and
 *                                      its writer as the log kept it, filtered: who changed what then
 *   /debug/timeline/state?rv=RV        every object at version RV (resource, namespace, name, version)
 *   /debug/timeline/history?key=KEY[&managedFields=true]
 *                                      every version of one object still in the log (a deleted one's
 *                                      too), each with its YAML diff from the one before (managedFields
 *                                      left out unless asked for, as `orchd diff` does), writer and time
 *
 * Times are the log's commit times; entries written before the log kept them are placed by the times
 * stamped into their objects.
 */
import type { ServerResponse } from 'node:http';
import { createPatch } from 'diff';
import { stringify } from 'yaml';
import type { ForkPoint } from '../../config/fork-origin.js';
import type { KubeObject } from '../../api/types.js';
import { attribution, stampedTimeMs, type LogEntry } from '../../registry/log-reader.js';
import { splitKey } from '../../api/object-keys.js';
import type { Registry } from '../../registry/registry.js';
import * as E from '../respond/status.js';
import { TIMELINE_PAGE } from './timeline-page.js';

/** The plot covers at most this many of the newest writes: a bounded read of the log per request. */
const WINDOW = 100_000;
const MAX_BUCKETS = 500;
/** The changes listed at most per read: a page a person reads, not a dump. */
const MAX_CHANGES = 2000;

type Author = Exclude<LogEntry['writer'], Uint8Array | undefined>;

/** An entry's writer, as the log kept it (none when it predates writers, or is sealed). */
const writerOf = (e: LogEntry): Author | undefined => (e.writer instanceof Uint8Array ? undefined : e.writer);

/** The verb of a write, as `orchd log` names it: the log's, else what the entry tells (a delete, or some write). */
const verbOf = (e: LogEntry): string => writerOf(e)?.verb ?? (e.type === 'delete' ? 'delete' : 'write');

/** The object as the diffs show it: without metadata.managedFields unless asked for (`orchd diff --show-managed-fields`). */
function shown(o: KubeObject | undefined, managedFields: boolean): KubeObject | undefined {
  if (!o || managedFields || o.metadata?.managedFields === undefined) return o;
  const { managedFields: _hidden, ...metadata } = o.metadata;
  return { ...o, metadata } as KubeObject;
}

/** `plural.group` as kubectl names a resource, from its collection (`<group>/<plural>`). */
function resourceOf(collection: string): string {
  const [group, plural] = collection.split('/');
  return group ? `${plural}.${group}` : plural;
}

function describe(key: string): { key: string; resource: string; namespace: string; name: string } {
  const { collection, suffix } = splitKey(key);
  const slash = suffix.indexOf('/');
  return { key, resource: resourceOf(collection), namespace: suffix.slice(0, slash), name: suffix.slice(slash + 1) };
}

function json(res: ServerResponse, body: unknown): void {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

/** A whole-number query parameter, or a 400 naming it. */
function intParam(url: URL, name: string, fallback?: number): number {
  const text = url.searchParams.get(name);
  if (text === null && fallback !== undefined) return fallback;
  if (text === null || !/^\d+$/.test(text)) throw E.badRequest(`${name}: must be a whole number, not ${JSON.stringify(text)}`);
  return Number(text);
}

async function writes(objects: Registry, buckets: number, forks: readonly ForkPoint[]): Promise<unknown> {
  const { oldest, head, from, pages } = objects.recentWrites(WINDOW);
  const points: { rv: number; time: number; resource: string; verb: string }[] = [];
  let timesFromLog = true;
  let newest = 0;
  for await (const page of pages) {
    for (const e of page) {
      if (e.time === undefined) timesFromLog = false;
      // Never back in time along the log, so buckets hold contiguous versions.
      newest = Math.max(newest, e.time ?? stampedTimeMs(e.value) ?? newest);
      points.push({ rv: e.seq, time: newest, resource: resourceOf(splitKey(e.key).collection), verb: verbOf(e) });
    }
  }
  const start = points[0]?.time ?? 0;
  const end = points.length > 0 ? points[points.length - 1].time + 1 : 0;
  const width = Math.max(1, Math.ceil((end - start) / buckets));
  const out: { start: number; end: number; firstRv: number; lastRv: number; counts: Record<string, number>; verbs: Record<string, number> }[] = [];
  for (const p of points) {
    const i = Math.floor((p.time - start) / width);
    while (out.length <= i) out.push({ start: start + out.length * width, end: start + (out.length + 1) * width, firstRv: 0, lastRv: 0, counts: {}, verbs: {} });
    const b = out[i];
    if (b.firstRv === 0) b.firstRv = p.rv;
    b.lastRv = p.rv;
    b.counts[p.resource] = (b.counts[p.resource] ?? 0) + 1;
    b.verbs[p.verb] = (b.verbs[p.verb] ?? 0) + 1;
  }
  // An empty bucket shows the state it lies in: that of the bucket before it.
  for (let i = 1; i < out.length; i++) if (out[i].firstRv === 0) out[i].firstRv = out[i].lastRv = out[i - 1].lastRv;
  const resources = [...new Set(points.map((p) => p.resource))].sort();
  const verbs = [...new Set(points.map((p) => p.verb))].sort();
  return { oldest, head, from, timesFromLog, bucketMs: width, resources, verbs, buckets: out, forks: forks.map((f) => ({ source: f.source, at: f.at })) };
}

async function state(objects: Registry, rv: number): Promise<unknown> {
  const items = await objects.everyObjectAt(rv);
  return { rv, items: items.map((s) => ({ ...describe(s.key), resourceVersion: String(s.seq) })) };
}

/** What a filter of the changes asks for: each given field must match exactly; writer matches the user or the field manager. */
interface ChangeFilter {
  resource?: string;
  namespace?: string;
  name?: string;
  writer?: string;
}

/** The writes from..to (within the newest WINDOW), deletes included, each with who made it, filtered; the newest MAX_CHANGES when more match. */
async function changes(objects: Registry, from: number, to: number, f: ChangeFilter): Promise<unknown> {
  const { pages } = objects.recentWrites(WINDOW);
  const out: unknown[] = [];
  let matched = 0;
  for await (const page of pages) {
    for (const e of page) {
      if (e.seq < from || e.seq > to) continue;
      const d = describe(e.key);
      const w = writerOf(e);
      if ((f.resource && d.resource !== f.resource) || (f.namespace && d.namespace !== f.namespace) || (f.name && d.name !== f.name)) continue;
      if (f.writer && w?.user !== f.writer && w?.manager !== f.writer) continue;
      matched++;
      out.push({
        ...d,
        rv: e.seq,
        time: e.time ?? stampedTimeMs(e.value) ?? null,
        type: e.type === 'delete' ? 'DELETED' : 'WRITTEN',
        verb: verbOf(e),
        user: w?.user ?? null,
        manager: w?.manager ?? null,
        subresource: w?.subresource ?? null,
      });
    }
  }
  return { from, to, matched, changes: out.slice(-MAX_CHANGES) };
}

async function history(objects: Registry, key: string, managedFields: boolean): Promise<unknown> {
  let before: KubeObject | undefined;
  const versions = (await objects.versionsOf(key)).map(({ entry, type }) => {
    const object = entry.value as KubeObject;
    const after = type === 'DELETED' ? undefined : object;
    // The writer the log kept; only an entry written before the log kept writers is guessed from managedFields (and says so).
    const w = writerOf(entry);
    const guess = w ? undefined : attribution(object, before);
    const [a, b] = [shown(before, managedFields), shown(after, managedFields)];
    const diff = createPatch(describe(key).name, a ? stringify(a) : '', b ? stringify(b) : '', undefined, undefined, { context: 3 });
    before = after;
    return {
      rv: entry.seq,
      type,
      time: entry.time ?? stampedTimeMs(object) ?? null,
      user: w?.user ?? null,
      verb: w ? (w.verb ?? null) : null,
      subresource: w?.subresource ?? null,
      manager: w ? (w.manager ?? null) : (guess?.manager ?? null),
      guessed: !w && guess !== undefined,
      operation: w ? null : (guess?.operation ?? null),
      // The hunks only: the header lines name the same object every time.
      diff: diff.split('\n').slice(4).join('\n'),
    };
  });
  return { ...describe(key), versions };
}

/** Answers /debug/timeline and its data reads; path is what follows /debug/timeline. */
export async function handleTimeline(res: ServerResponse, url: URL, path: string, objects: Registry, forks: readonly ForkPoint[]): Promise<void> {
  switch (path) {
    case '':
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(TIMELINE_PAGE);
      return;
    case 'writes':
      return json(res, await writes(objects, Math.min(MAX_BUCKETS, Math.max(1, intParam(url, 'buckets', 60))), forks));
    case 'state':
      return json(res, await state(objects, intParam(url, 'rv')));
    case 'changes': {
      const p = url.searchParams;
      const f: ChangeFilter = { resource: p.get('resource') || undefined, namespace: p.get('namespace') || undefined, name: p.get('name') || undefined, writer: p.get('writer') || undefined };
      return json(res, await changes(objects, intParam(url, 'from', 0), intParam(url, 'to', Number.MAX_SAFE_INTEGER), f));
    }
    case 'history': {
      const key = url.searchParams.get('key');
      if (!key) throw E.badRequest('key: Required value');
      return json(res, await history(objects, key, url.searchParams.get('managedFields') === 'true'));
    }
    default:
      throw E.pathNotFound();
  }
}
