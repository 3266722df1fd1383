/**
 * The history of a running orchd, read over its API as any client could: the state at a version is
 * an Exact list of each kind (resourceVersionMatch=Exact, paged), the changes are watches of each
 * kind from a version, merged in resourceVersion order, and one object's versions are walked back
 * through Exact gets (or, for a deleted one, read from a watch of its name: see versionsOf).
 *
 * The API carries no commit times, so times here are the ones the server stamped into the objects
 * (to the second; timesFromLog is false). A watch has no end: each is read until the server ends it
 * (timeoutSeconds, scaled to the number of versions asked for), which bounds how long a read takes;
 * events past the version asked for are dropped.
 */
import type { KubeObject } from '../../src/resources/types.js';
import type { KindStrategy } from '../../src/resources/strategy.js';
import { kinds } from '../../src/resources/registry.js';
import { collectionOfKind, kindOfKey, selects, StampClock, takesKind, TimeTravelError, type Change, type Filter, type History, type Stored } from './history.js';

/** Versions a watch replays per second, at least (on a loaded machine), when its timeout is chosen. */
const WATCH_RATE = 10_000;
const PAGE = 500;

interface StatusBody {
  kind?: string;
  code?: number;
  message?: string;
}

export async function openServer(url: string): Promise<History> {
  const base = url.replace(/\/+$/, '');
  let head: number;
  try {
    head = Number((await getJson(base, '/api/v1/namespaces?limit=1')).metadata.resourceVersion);
  } catch (err) {
    if (err instanceof TimeTravelError) throw err;
    throw new TimeTravelError(`--server ${url}: cannot reach it (${err instanceof Error ? (err.cause as Error | undefined)?.message ?? err.message : String(err)})`);
  }
  return new ServerHistory(base, head, await oldestOf(base, head));
}

/** The oldest version the server still reads: an Exact get below it answers 410 naming it. */
async function oldestOf(base: string, head: number): Promise<number> {
  if (head < 1) return 0;
  const res = await fetch(`${base}/api/v1/namespaces/default?resourceVersion=1&resourceVersionMatch=Exact`);
  const body = (await res.json()) as StatusBody;
  if (res.status !== 410) return 0;
  const m = /\((\d+)\)\s*$/.exec(body.message ?? '');
  if (!m) throw new TimeTravelError(`the server answered a read at version 1 with 410 but did not say its oldest version: ${body.message}`);
  return Number(m[1]);
}

async function getJson(base: string, path: string): Promise<any> {
  const res = await fetch(base + path, { headers: { accept: 'application/json' } });
  const body = await res.json();
  if (!res.ok) throw new TimeTravelError(`GET ${path}: ${res.status} ${(body as StatusBody).message ?? ''}`.trim());
  return body;
}

/** The collection path of a kind, in one namespace when given and the kind is namespaced. */
function pathOf(k: KindStrategy, namespace: string | undefined): string {
  const root = k.group === '' ? `/api/${k.versions[0]}` : `/apis/${k.group}/${k.versions[0]}`;
  return k.namespaced && namespace !== undefined ? `${root}/namespaces/${encodeURIComponent(namespace)}/${k.plural}` : `${root}/${k.plural}`;
}

const keyOf = (k: KindStrategy, o: KubeObject): string => `${collectionOfKind(k)}/${k.namespaced ? (o.metadata.namespace ?? '') : ''}/${o.metadata.name}`;

/** The events of a watch until the server ends it, each with its kind's key. */
async function watchAll(base: string, path: string, timeoutSeconds: number): Promise<{ type: Change['type']; object: KubeObject }[]> {
  const sep = path.includes('?') ? '&' : '?';
  const res = await fetch(`${base}${path}${sep}watch=1&timeoutSeconds=${timeoutSeconds}`);
  if (!res.ok) throw new TimeTravelError(`watch ${path}: ${res.status} ${((await res.json()) as StatusBody).message ?? ''}`.trim());
  const text = await res.text();
  const out: { type: Change['type']; object: KubeObject }[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const ev = JSON.parse(line) as { type: string; object: KubeObject & StatusBody };
    if (ev.type === 'ERROR') throw new TimeTravelError(`watch ${path}: ${ev.object.code ?? ''} ${ev.object.message ?? ''}`.trim());
    if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') out.push({ type: ev.type, object: ev.object });
  }
  return out;
}

class ServerHistory implements History {
  readonly timesFromLog = false;

  constructor(
    private readonly base: string,
    readonly head: number,
    readonly oldest: number,
  ) {}

  private timeoutFor(versions: number): number {
    return 2 + Math.ceil(versions / WATCH_RATE);
  }

  async *changes(from: number, to: number, filter: Filter): AsyncIterable<Change> {
    const since = Math.max(from - 1, 1);
    const timeout = this.timeoutFor(to - since);
    // Every kind, cluster-wide, whatever the filter: times are guessed along the whole log, as for
    // an old data folder (history.ts StampClock).
    const perKind = await Promise.all(
      kinds.map(async (k) => (await watchAll(this.base, `${pathOf(k, undefined)}?resourceVersion=${since}`, timeout)).map((ev) => ({ ...ev, key: keyOf(k, ev.object) }))),
    );
    const merged = perKind.flat().map((ev) => ({ ...ev, rv: Number(ev.object.metadata.resourceVersion) }));
    // A watch from `since` starts after it: entry 1, when asked for, is read as the state at 1.
    if (from <= 1 && to >= 1) {
      for (const s of await this.stateAt(1, { kinds })) if (Number(s.object.metadata.resourceVersion) === 1) merged.push({ type: 'ADDED', object: s.object, key: s.key, rv: 1 });
    }
    merged.sort((a, b) => a.rv - b.rv);
    const clock = new StampClock();
    for (const ev of merged) {
      const time = clock.timeOf(ev.object);
      if (ev.rv < from || ev.rv > to || !takesKind(filter, ev.key) || !selects(filter, ev.key, () => ev.object)) continue;
      yield { rv: ev.rv, type: ev.type, key: ev.key, object: ev.object, time };
    }
  }

  async stateAt(rv: number, filter: Filter): Promise<Stored[]> {
    const out: Stored[] = [];
    const sorted = [...filter.kinds].sort((a, b) => collectionOfKind(a).localeCompare(collectionOfKind(b)));
    for (const k of sorted) {
      let cont = '';
      do {
        // A continue token carries its version: Kubernetes forbids a resourceVersion beside it.
        const q = `limit=${PAGE}&${cont ? `continue=${encodeURIComponent(cont)}` : `resourceVersion=${rv}&resourceVersionMatch=Exact`}`;
        const list = await getJson(this.base, `${pathOf(k, filter.namespace)}?${q}`);
        for (const o of list.items as KubeObject[]) {
          // A list's items carry no apiVersion and kind; the state's objects do, as stored.
          const object = { apiVersion: k.group === '' ? k.versions[0] : `${k.group}/${k.versions[0]}`, kind: k.kind, ...(o as object) } as KubeObject;
          const key = keyOf(k, object);
          if (selects(filter, key, () => object)) out.push({ key, object });
        }
        cont = list.metadata.continue ?? '';
      } while (cont);
    }
    return out;
  }

  /** The object as it was at version rv (an Exact get), or undefined when it did not exist then. */
  private async getAt(path: string, name: string, rv: number): Promise<KubeObject | undefined> {
    const res = await fetch(`${this.base}${path}/${encodeURIComponent(name)}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    if (res.status === 404) return undefined;
    const body = (await res.json()) as KubeObject & StatusBody;
    if (!res.ok) throw new TimeTravelError(`GET ${path}/${name} at ${rv}: ${res.status} ${body.message ?? ''}`.trim());
    return body;
  }

  /**
   * An object that exists at the head: walked back through Exact gets, each at one less than the
   * version found (cheap: the server's key index answers each, however long the log). That finds
   * the versions since its latest creation; a life before a delete is not found this way. A deleted
   * object: read from a watch of its name from the oldest version (slower, bounded by its timeout).
   */
  async versionsOf(key: string): Promise<Change[]> {
    const k = kindOfKey(key)!;
    const [, , namespace, name] = key.split('/');
    const path = pathOf(k, k.namespaced ? namespace : undefined);
    const floor = Math.max(this.oldest, 1);
    const out: Change[] = [];
    for (let at = this.head; at >= floor; ) {
      const object = await this.getAt(path, name, at);
      if (!object) break;
      const rv = Number(object.metadata.resourceVersion);
      out.unshift({ rv, type: 'MODIFIED', key, object, time: undefined });
      at = rv - 1;
    }
    // The walk stopped where the object did not exist, or at the oldest version: its first is an add.
    if (out.length > 0) out[0].type = 'ADDED';
    else {
      const first = await this.getAt(path, name, floor);
      if (first) out.push({ rv: Number(first.metadata.resourceVersion), type: 'ADDED', key, object: first, time: undefined });
      const events = await watchAll(this.base, `${path}?resourceVersion=${floor}&fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`, this.timeoutFor(this.head - floor));
      for (const ev of events) out.push({ rv: Number(ev.object.metadata.resourceVersion), type: ev.type, key, object: ev.object, time: undefined });
    }
    const clock = new StampClock();
    for (const c of out) c.time = clock.timeOf(c.object);
    return out.filter((c) => c.rv <= this.head);
  }

  async versionAt(timeMs: number): Promise<number> {
    let found = 0;
    for await (const c of this.changes(Math.max(this.oldest, 1), this.head, { kinds })) {
      if (c.time !== undefined && c.time > timeMs) return found;
      found = c.rv;
    }
    return found;
  }

  async close(): Promise<void> {}
}
