/**
 * /debug/log: the log itself, read only, for the time-travel tools over --server (tools/timetravel/
 * server.ts) to answer exactly as they answer from a data folder: each entry with its commit time
 * and its type as a watch reports it, which no list or watch of the API carries.
 *
 *   /debug/log?from=A&to=B[&collection=C…][&namespace=NS][&name=N][&type=T…][&follow=true]
 *                              entries A..B (B: the head) as JSON lines {rv, type, key, time, writer, object};
 *                              name: of objects of that name only; type: ADDED, MODIFIED or DELETED only
 *                              (repeated or comma-separated); follow: then every entry committed after,
 *                              until the client goes
 *   /debug/log/head            {oldest, head, headTime, timesFromLog}
 *   /debug/log/versions?key=K  every version of one object still in the log, as entries
 *   /debug/log/at?time=MS      {rv}: the newest version committed at or before the time
 *   /debug/log/state?at=RV[&collection=C…][&namespace=NS]
 *                              every object at RV, in key order, as lines `<key>\t<JSON>`: the JSON
 *                              written from the stored bytes, as a data folder's state is printed
 *
 * Authorized as a list of each resource it reads (cluster-wide, or in the namespace asked for): a
 * user reads the log of the resources they may list, nothing else. head and at tell of the whole
 * log, so they are authorized as the entries would be, for the same collection and namespace
 * parameters (every resource without them); versions as a get of its object; state as the entries
 * are, the collections asked for (every one the user may list without them). The kind of a deleted
 * CustomResourceDefinition, no longer served, is still in the log. It can be asked for by its
 * collection, and the request is checked by its group and resource, as RBAC names them. When no
 * collection is asked for, its entries are included if the user may list that resource and left out
 * if not.
 */
import type { ServerResponse } from 'node:http';
import type { AuthorizationAttributes } from '../../api/authorization.js';
import { type KindStrategy } from '../../api/strategy.js';
import { stampedTimeMs, type LogEntry, type LogReader } from '../../registry/log-reader.js';
import { collectionOf, splitKey } from '../../api/object-keys.js';
import * as E from '../respond/status.js';

/** How often a follow looks for entries committed since. */
const FOLLOW_MS = 100;

/** Checks one resource read the way a list of it is checked: throws the refusal. */
export type CheckRead = (a: Omit<AuthorizationAttributes, 'user'>) => void | Promise<void>;

function wholeNumber(url: URL, name: string, fallback?: number): number {
  const text = url.searchParams.get(name);
  if (text === null && fallback !== undefined) return fallback;
  if (text === null || !/^\d{1,15}$/.test(text)) throw E.badRequest(`${name}: must be a whole number, not ${JSON.stringify(text)}`);
  return Number(text);
}

/**
 * A collection no kind of the server serves now, named as `<group>/<plural>` in a group of its own:
 * a CustomResourceDefinition's, deleted since, whose objects the log still holds. (The core group
 * and the built-in ones are all served: a name there that is not is a mistake.)
 */
const formerCustom = (c: string, kinds: readonly KindStrategy[]): boolean => {
  const group = c.slice(0, c.indexOf('/'));
  return /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(c) && !kinds.some((k) => (k.group === group && !k.custom) || collectionOf(k) === c);
};

/** The read of a collection no kind serves now, checked by its group and resource as RBAC names them. */
const readOf = (verb: string, collection: string, namespace: string | undefined): Omit<AuthorizationAttributes, 'user'> => {
  const slash = collection.indexOf('/');
  return { verb, isResourceRequest: true, apiGroup: collection.slice(0, slash), apiVersion: '', resource: collection.slice(slash + 1), ...(namespace !== undefined ? { namespace } : {}) };
};

/** Whether a check allows the read (a refusal is not an error here: what may not be read is left out; an authorizer's failure is). */
const allows = async (check: CheckRead, a: Omit<AuthorizationAttributes, 'user'>): Promise<boolean> => {
  try {
    await check(a);
    return true;
  } catch (err) {
    if (err instanceof E.ApiError && err.code === 403) return false;
    throw err;
  }
};

/** The kinds asked for (every kind without ?collection=), each checked as a list of it; and the collections of kinds served no more asked for. */
async function readableKinds(url: URL, kinds: readonly KindStrategy[], namespace: string | undefined, check: CheckRead): Promise<{ chosen: KindStrategy[]; former: string[] }> {
  const asked = url.searchParams.getAll('collection');
  const chosen: KindStrategy[] = [];
  const former: string[] = [];
  for (const c of asked.length === 0 ? kinds.map(collectionOf) : asked) {
    const k = kinds.find((kind) => collectionOf(kind) === c);
    if (!k && formerCustom(c, kinds)) former.push(c);
    else if (!k) throw E.badRequest(`collection: ${JSON.stringify(c)} names no resource of this server`);
    // In a namespace, a cluster-scoped kind has no entries: nothing of it is read.
    else if (namespace === undefined || k.namespaced) chosen.push(k);
  }
  for (const k of chosen) {
    await check({ verb: 'list', isResourceRequest: true, apiGroup: k.group, apiVersion: k.versions[0], resource: k.plural, ...(k.namespaced && namespace !== undefined ? { namespace } : {}) });
  }
  for (const c of former) await check(readOf('list', c, namespace));
  return { chosen, former };
}

const EVENT_TYPES = ['ADDED', 'MODIFIED', 'DELETED'];

/** ?type=: the event types asked for (none: every one), any case, repeated or comma-separated. */
function typesAsked(url: URL): Set<string> | undefined {
  const asked = url.searchParams
    .getAll('type')
    .flatMap((t) => t.split(','))
    .filter(Boolean)
    .map((t) => t.toUpperCase());
  const wrong = asked.find((t) => !EVENT_TYPES.includes(t));
  if (wrong !== undefined) throw E.badRequest(`type: ${JSON.stringify(wrong)} is not one of ${EVENT_TYPES.join(', ')}`);
  return asked.length === 0 ? undefined : new Set(asked);
}

/** An entry's type as a watch reports it, from the key index. */
function typeOf(store: LogReader, e: LogEntry): string {
  if (e.type !== 'put') return 'DELETED';
  const revs = store.revisionsOf(e.key);
  const i = revs.findIndex((r) => Math.abs(r) === e.seq);
  return i > 0 && revs[i - 1] > 0 ? 'MODIFIED' : 'ADDED';
}

/** An entry as a JSON line, of the type given. */
function line(e: LogEntry, type: string): string {
  const time = e.time ?? stampedTimeMs(e.value) ?? null;
  const writer = e.writer instanceof Uint8Array ? undefined : e.writer;
  return `{"rv":${e.seq},"type":"${type}","key":${JSON.stringify(e.key)},"time":${time},${writer ? `"writer":${JSON.stringify(writer)},` : ''}"object":${JSON.stringify(e.value)}}\n`;
}

/** Writes text, waiting while the client's connection is full. false once the client has gone. */
async function send(res: ServerResponse, text: string | Buffer): Promise<boolean> {
  if (res.destroyed) return false;
  if (!res.write(text)) await new Promise<void>((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
  return !res.destroyed;
}

async function entries(res: ServerResponse, url: URL, store: LogReader, kinds: readonly KindStrategy[], checkRead: CheckRead): Promise<void> {
  const namespace = url.searchParams.get('namespace') ?? undefined;
  const { chosen, former } = await readableKinds(url, kinds, namespace, checkRead);
  const wanted = new Set([...chosen.map(collectionOf), ...former]);
  // Asked for every kind: a kind not served now (a deleted CRD's) is read too where the user may list it, decided once per collection.
  const others = url.searchParams.has('collection') ? undefined : new Map<string, boolean>();
  const from = wholeNumber(url, 'from', Math.max(store.oldestVersion, 1));
  const head = store.appliedSeq;
  const to = Math.min(wholeNumber(url, 'to', head), head);
  if (from < store.oldestVersion) throw E.gone(`too old resource version: ${from} (${store.oldestVersion})`);
  const follow = url.searchParams.get('follow') === 'true';
  const name = url.searchParams.get('name') ?? undefined;
  const types = typesAsked(url);
  /** Whether the entry of key is read; undefined: its collection is of no kind served when the read began, not yet checked. */
  const takes = (key: string): boolean | undefined => {
    const { collection, suffix } = splitKey(key);
    if (namespace !== undefined && !suffix.startsWith(`${namespace}/`)) return false;
    // The suffix is `<namespace>/<name>`, the namespace empty for a cluster-scoped object.
    if (name !== undefined && suffix.slice(suffix.indexOf('/') + 1) !== name) return false;
    if (wanted.has(collection)) return true;
    // Not served when the read began (a CRD's kind, deleted since or defined after): the user's say decides.
    return others ? others.get(collection) : false;
  };
  const check = async (key: string): Promise<boolean> => {
    const { collection } = splitKey(key);
    const ok = await allows(checkRead, readOf('list', collection, namespace));
    others!.set(collection, ok);
    return ok;
  };
  res.setHeader('Content-Type', 'application/json');
  let last = from - 1;
  const pass = async (upTo: number): Promise<boolean> => {
    if (upTo <= last) return true;
    for await (const page of store.log.read(last + 1, upTo)) {
      let text = '';
      for (const e of page) {
        if (!(takes(e.key) ?? (await check(e.key)))) continue;
        const type = typeOf(store, e);
        if (!types || types.has(type)) text += line(e, type);
      }
      last = page.length > 0 ? page[page.length - 1].seq : last;
      if (text !== '' && !(await send(res, text))) return false;
    }
    last = upTo;
    return true;
  };
  if (!(await pass(to)) || !follow) return void res.end();
  res.flushHeaders();
  // Following: what the views have applied since, until the client goes.
  while (!res.destroyed) {
    await new Promise((r) => setTimeout(r, FOLLOW_MS));
    if (!(await pass(store.appliedSeq))) return;
  }
}

/**
 * The objects at ?at= of the collections asked for (or of every one the user may list), in one
 * namespace when asked, streamed as the registry writes them (registry/log-reader.ts stateLines).
 */
async function state(res: ServerResponse, url: URL, store: LogReader, kinds: readonly KindStrategy[], checkRead: CheckRead): Promise<void> {
  const at = wholeNumber(url, 'at');
  const namespace = url.searchParams.get('namespace') ?? undefined;
  const { chosen, former } = await readableKinds(url, kinds, namespace, checkRead);
  const collections = [...chosen.map(collectionOf), ...former];
  if (!url.searchParams.has('collection')) {
    // Every kind asked for: the collections of kinds served no more are read where the user may list them.
    const served = new Set(kinds.map(collectionOf));
    for (const c of store.collectionsInHistory()) if (!served.has(c) && (await allows(checkRead, readOf('list', c, namespace)))) collections.push(c);
  }
  // ?managedFields=false: each object without metadata.managedFields, left out in the transcoder (a command hides them by default).
  const dropManagedFields = url.searchParams.get('managedFields') === 'false';
  const chunks = store.stateLines(at, collections, namespace === undefined ? '' : `${namespace}/`, dropManagedFields)[Symbol.asyncIterator]();
  // The first chunk before the headers: a version out of range is a Status, not a cut stream.
  let next = await chunks.next();
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  while (!next.done) {
    if (!(await send(res, next.value))) return void (await chunks.return?.());
    next = await chunks.next();
  }
  res.end();
}

/** The newest version committed at or before ms, by halves (commit times never decrease along the log). */
async function versionAt(store: LogReader, ms: number): Promise<number> {
  let lo = store.log.firstSeq - 1;
  let hi = store.appliedSeq;
  while (lo < hi) {
    const mid = lo + Math.ceil((hi - lo) / 2);
    const e = await store.log.get(mid);
    const t = e?.time ?? stampedTimeMs(e?.value) ?? 0;
    if (t <= ms) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Answers /debug/log and its reads; path is what follows /debug/log. */
export async function handleDebugLog(res: ServerResponse, url: URL, path: string, store: LogReader, kinds: readonly KindStrategy[], check: CheckRead): Promise<void> {
  switch (path) {
    case '':
      return entries(res, url, store, kinds, check);
    case 'head': {
      await readableKinds(url, kinds, url.searchParams.get('namespace') ?? undefined, check);
      const head = store.appliedSeq;
      const last = head > 0 ? await store.log.get(head) : undefined;
      const first = store.log.firstSeq <= head ? await store.log.get(store.log.firstSeq) : undefined;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ oldest: store.oldestVersion, head, headTime: last?.time ?? stampedTimeMs(last?.value) ?? null, timesFromLog: first === undefined || first.time !== undefined }));
      return;
    }
    case 'versions': {
      const key = url.searchParams.get('key');
      if (!key) throw E.badRequest('key: Required value');
      const { collection, suffix } = splitKey(key);
      const kind = kinds.find((k) => collectionOf(k) === collection);
      const name = suffix.slice(suffix.indexOf('/') + 1);
      if (kind) {
        await check({
          verb: 'get',
          isResourceRequest: true,
          apiGroup: kind.group,
          apiVersion: kind.versions[0],
          resource: kind.plural,
          ...(kind.namespaced ? { namespace: suffix.slice(0, suffix.indexOf('/')) } : {}),
          name,
        });
      } else if (formerCustom(collection, kinds)) {
        // A deleted CRD's kind: namespaced when its key names a namespace.
        await check({ ...readOf('get', collection, suffix.startsWith('/') ? undefined : suffix.slice(0, suffix.indexOf('/'))), name });
      } else throw E.badRequest(`key: ${JSON.stringify(key)} names no resource of this server`);
      res.setHeader('Content-Type', 'application/json');
      res.end((await store.versionsOf(key)).map(({ entry }) => line(entry, typeOf(store, entry))).join(''));
      return;
    }
    case 'state':
      return state(res, url, store, kinds, check);
    case 'at':
      await readableKinds(url, kinds, url.searchParams.get('namespace') ?? undefined, check);
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ rv: await versionAt(store, wholeNumber(url, 'time')) }));
      return;
    default:
      throw E.pathNotFound();
  }
}
