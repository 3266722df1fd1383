import { LogError } from '../log/log.js';
import { collectionOf, suffixOf } from '../store/keys.js';
import { getAt, listObjects, type ListResult } from '../store/list.js';
import { encodeStored } from '../store/view.js';
import type { Request } from './context.js';
import * as Q from './query.js';
import { apiVersion, sendObject } from './render.js';
import { send } from './respond.js';
import { selectorOf } from './selectors.js';
import * as E from './status.js';
import { tableFor, wantsTable } from './table.js';

/** GET of one object, now or at a resourceVersion. */
export async function handleGet(r: Request): Promise<void> {
  const { route } = r;
  const opts = Q.getOptions(r.url.searchParams);
  if (opts.resourceVersion && opts.resourceVersion !== '0') return getAtVersion(r, opts.resourceVersion, opts.resourceVersionMatch === 'Exact');
  const s = r.server.objects.get(route.kind, route.namespace, route.name!);
  sendObject(r, 200, s.obj, encodeStored(s));
}

/** Exact: the object as it was at rv (time travel). Otherwise rv is a floor: wait until the view has it. */
async function getAtVersion(r: Request, rv: string, exact: boolean): Promise<void> {
  const seq = Q.parseResourceVersion(rv);
  const { objects } = r.server;
  const key = objects.key(r.route.kind, r.route.namespace, r.route.name!);
  if (!(await objects.store.waitFor(seq, 3000))) throw E.tooLargeResourceVersion(seq, objects.store.appliedSeq);
  try {
    const s = !exact || seq >= objects.store.appliedSeq ? objects.store.get(key) : await getAt(objects.store, key, seq);
    if (!s) throw E.notFound(E.qualified(r.route.kind, r.route.name));
    sendObject(r, 200, s.obj, encodeStored(s));
  } catch (err) {
    throw translateRead(err, seq);
  }
}

function translateRead(err: unknown, seq: number): unknown {
  if (err instanceof LogError && err.code === 'COMPACTED') return E.gone(`too old resource version: ${seq}`);
  return err;
}

/** GET of a collection: selectors, pages, and reads at a version. */
export async function handleList(r: Request): Promise<void> {
  const { route, server } = r;
  const params = r.url.searchParams;
  const opts = Q.listOptions(params);
  const matches = selectorOf(route.kind, params);
  const collection = collectionOf(route.kind);
  const prefix = route.kind.namespaced && route.namespace !== undefined ? suffixOf(route.namespace, '') : '';
  const store = server.objects.store;
  const query = `${collection}|${prefix}|${params.get('labelSelector') ?? ''}|${params.get('fieldSelector') ?? ''}`;
  let atSeq: number | undefined;
  let after: string | undefined;
  if (opts.continue) {
    const p = server.tokens.decode(opts.continue, query);
    if (!p) throw E.badRequest('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
    atSeq = p.seq;
    after = p.after;
    if (atSeq < store.log.firstSeq - 1) {
      // Past the horizon: a fresh token continues after the same key from the latest snapshot.
      const fresh = server.tokens.encode({ seq: store.appliedSeq, after }, query);
      throw E.resourceExpired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.', fresh);
    }
  } else if (opts.resourceVersion !== undefined && opts.resourceVersion !== '0') {
    // NotOlderThan (and the legacy unset match) is a floor; Exact reads the past through the key index.
    const seq = Q.parseResourceVersion(opts.resourceVersion);
    if (!(await store.waitFor(seq, 3000))) throw E.tooLargeResourceVersion(seq, store.appliedSeq);
    if (opts.resourceVersionMatch === 'Exact') atSeq = seq;
  }
  let result: ListResult;
  try {
    result = await listObjects(store, { collection, prefix, ...(matches ? { matches } : {}), ...(opts.limit ? { limit: opts.limit } : {}), ...(after !== undefined ? { after } : {}), ...(atSeq !== undefined ? { atSeq } : {}) });
  } catch (err) {
    throw translateRead(err, atSeq ?? 0);
  }
  const meta: { resourceVersion: string; continue?: string; remainingItemCount?: number } = { resourceVersion: String(result.seq) };
  if (result.next !== undefined) {
    meta.continue = server.tokens.encode({ seq: result.seq, after: result.next }, query);
    if (result.remaining !== undefined) meta.remainingItemCount = result.remaining;
  }
  const table = wantsTable(r.req.headers.accept);
  if (table) {
    send(r.res, 200, tableFor(route.kind, result.items.map((s) => s.obj), { version: table, includeObject: Q.includeObject(params), listMeta: meta }), r.out);
    return;
  }
  const v = apiVersion(route);
  const head = `{"kind":${JSON.stringify(route.kind.listKind)},"apiVersion":${JSON.stringify(v)},"metadata":${JSON.stringify(meta)},"items":[`;
  const json = head + result.items.map((s) => (s.obj.apiVersion === v ? encodeStored(s) : JSON.stringify({ ...s.obj, apiVersion: v }))).join(',') + ']}';
  send(r.res, 200, undefined, r.out, json);
}

