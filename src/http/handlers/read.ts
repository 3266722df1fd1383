import { StoreError } from '../../store/errors.js';
import { collectionOf, suffixOf } from '../../store/keys.js';
import { listObjects, type ListQuery, type ListResult } from '../../store/list.js';
import { readPlan, type StoreVersions } from '../../store/read-plan.js';
import type { Store } from '../../store/store.js';
import { encodeStored, storedApiVersion, type StoredObject } from '../../store/view.js';
import type { Request } from '../context.js';
import * as Q from '../codec/query.js';
import { apiVersion, sendStored } from '../respond/render.js';
import { send, sendParts } from '../respond/respond.js';
import { selectionOf } from '../codec/selectors.js';
import * as E from '../respond/status.js';
import { tableFor, wantsTable } from '../respond/table.js';

const COMMA = Buffer.from(',');
const LIST_END = Buffer.from(']}');

/** How long a read "not older than" a version the view has not reached yet waits (Kubernetes' watch cache: 3 s). */
const FRESHNESS_WAIT_MS = 3000;

const LIST_TOO_OLD = 'The resourceVersion for the provided list is too old.';
const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** Waits until the view has applied seq (NotOlderThan), else Kubernetes' 504 "Too large resource version" with Retry-After: 1. */
async function waitFresh(store: Store, seq: number): Promise<void> {
  if (!(await store.waitFor(seq, FRESHNESS_WAIT_MS))) throw E.tooLargeResourceVersion(seq, store.appliedSeq, 1);
}

/** resourceVersion as the read plan takes it: unset ("" too) is a consistent read, not "0" (any). */
const requestedVersion = (rv: string | undefined): { resourceVersion?: number } =>
  rv === undefined || rv === '' ? {} : { resourceVersion: Q.parseResourceVersion(rv) };

/** The store's versions a read plan is made against. */
const versionsOf = (store: Store): StoreVersions => ({ horizon: store.oldestVersion, head: store.appliedSeq });

/**
 * A read without a resourceVersion is consistent (KEP-2340): on a log shared by replicas, the view
 * first catches up to the newest version any of them wrote, read from etcd with a quorum. A replica
 * that cannot reach etcd, or is too far behind, answers 503 with Retry-After.
 */
async function waitConsistent(store: Store): Promise<void> {
  let head: number | undefined;
  try {
    head = await store.headSeq();
  } catch (err) {
    throw E.serviceUnavailable(`cannot read the current resource version from storage: ${err instanceof Error ? err.message : String(err)}`, 1);
  }
  if (head !== undefined && !(await store.waitFor(head, FRESHNESS_WAIT_MS))) {
    throw E.serviceUnavailable(`storage is ahead of this server: it has applied ${store.appliedSeq} of ${head}`, 1);
  }
}

/**
 * GET of one object. resourceVersion unset: the newest state; "0": any (the newest too); N: not older
 * than N (waits briefly for the view). With resourceVersionMatch=Exact (an orchd extension: Kubernetes'
 * GetOptions has no match) the object as it was at N, for any N since the compaction horizon.
 */
export async function handleGet(r: Request): Promise<void> {
  const { route } = r;
  const opts = Q.getOptions(r.url.searchParams);
  const { objects } = r.server;
  const store = objects.store;
  const plan = readPlan({ ...requestedVersion(opts.resourceVersion), ...(opts.resourceVersionMatch ? { resourceVersionMatch: opts.resourceVersionMatch } : {}) }, versionsOf(store));
  const tooOld = (seq: number) => E.gone(`too old resource version: ${seq} (${store.oldestVersion})`);
  switch (plan.kind) {
    case 'tooLarge':
      throw E.tooLargeResourceVersion(plan.seq, store.appliedSeq, 0);
    case 'expired':
      throw tooOld(plan.seq);
    case 'at': {
      let s;
      try {
        s = await store.getAt(objects.key(route.kind, route.namespace, route.name!), plan.seq);
      } catch (err) {
        if (err instanceof StoreError && err.code === 'COMPACTED') throw tooOld(plan.seq);
        throw err;
      }
      if (!s) throw E.notFound(E.qualified(route.kind, route.name));
      return sendStored(r, 200, s);
    }
    case 'consistent':
      await waitConsistent(store);
      break;
    case 'wait':
      await waitFresh(store, plan.seq);
  }
  sendStored(r, 200, objects.get(route.kind, route.namespace, route.name!));
}

/**
 * GET of a collection: selectors, pages, and reads at a version, with Kubernetes' semantics:
 *
 * | match        | no limit / first page                  | continue                                   |
 * |--------------|----------------------------------------|--------------------------------------------|
 * | unset, rv "" | newest                                 | the token's snapshot                       |
 * | unset, rv 0  | any (newest)                           | the token's snapshot                       |
 * | unset, rv N  | not older than N; with limit: Exact N  | 400 (rv with continue)                     |
 * | NotOlderThan | not older than N (rv 0: any)           | 422 (match with continue)                  |
 * | Exact        | the state at N                         | 422 (match with continue)                  |
 *
 * Every page of a list is read at the first page's version, whatever is written meanwhile. A token
 * whose version was compacted answers 410 with a fresh token that goes on after the same key from
 * the newest state (Kubernetes' inconsistent continuation).
 */
export async function handleList(r: Request): Promise<void> {
  const { items, meta } = await listPage(r, Q.listOptions(r.url.searchParams));
  await sendList(r, items, meta);
}

/**
 * The page a list with these options returns: with a limit, one page (from continue when given);
 * without one, every object (from continue on). A DELETE of a collection deletes exactly this.
 */
export async function listPage(r: Request, opts: Q.ListOptions): Promise<{ items: readonly StoredObject[]; meta: ListMeta }> {
  const { route, server } = r;
  const params = r.url.searchParams;
  const sel = selectionOf(route.kind, params);
  const collection = collectionOf(route.kind);
  const prefix = route.kind.namespaced && route.namespace !== undefined ? suffixOf(route.namespace, '') : '';
  const store = server.objects.store;
  const query = [collection, prefix, params.get('labelSelector') ?? '', params.get('fieldSelector') ?? '', params.get('shardSelector') ?? ''].join('\0');
  const q: ListQuery = { collection, prefix };
  if (sel.matches) q.matches = sel.matches;
  if (sel.indexTerms) q.indexTerms = sel.indexTerms;
  if (opts.limit) q.limit = opts.limit;
  let continueSeq: number | undefined;
  let remaining: number | undefined;
  if (opts.continue) {
    const p = server.tokens.decode(opts.continue, query);
    if (!p) throw E.badRequest('invalid continue token: continue key is not valid');
    q.after = p.after;
    continueSeq = p.seq;
    remaining = p.remaining;
  }
  const paging = continueSeq !== undefined;
  const plan = readPlan(
    {
      ...requestedVersion(opts.resourceVersion),
      ...(opts.resourceVersionMatch ? { resourceVersionMatch: opts.resourceVersionMatch } : {}),
      ...(continueSeq !== undefined ? { continueSeq } : {}),
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    },
    versionsOf(store),
  );
  switch (plan.kind) {
    case 'tooLarge':
      throw E.tooLargeResourceVersion(plan.seq, store.appliedSeq, 0);
    case 'expired':
      throw plan.continue ? E.resourceExpired(CONTINUE_TOO_OLD, server.tokens.encode({ seq: -1, after: q.after! }, query)) : E.resourceExpired(LIST_TOO_OLD);
    case 'at':
      q.atSeq = plan.seq;
      if (remaining !== undefined) q.remainingBefore = remaining;
      break;
    case 'consistent':
      await waitConsistent(store);
      break;
    case 'wait':
      await waitFresh(store, plan.seq);
  }
  // Objects in range that cannot be read fail the list, each named (Kubernetes' StorageReadError).
  const failures = [...store.corruptUnder(collection, prefix)].map(([key, c]) => ({ key, message: E.corruptObjectMessage(key, c.seq, c.message) }));
  if (failures.length > 0) throw E.storeReadError(E.qualified(route.kind), `${collection}/${prefix}`, failures);
  let result: ListResult;
  try {
    result = await listObjects(store, q);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'COMPACTED') {
      // Overtaken by a compaction while it read.
      if (paging && q.after !== undefined) throw E.resourceExpired(CONTINUE_TOO_OLD, server.tokens.encode({ seq: -1, after: q.after }, query));
      throw E.resourceExpired(LIST_TOO_OLD);
    }
    if (err instanceof StoreError && err.code === 'FUTURE_SEQ') throw E.tooLargeResourceVersion(err.seq ?? 0, store.appliedSeq, 0);
    throw err;
  }
  const meta: ListMeta = { resourceVersion: String(result.seq) };
  if (result.next !== undefined) {
    meta.continue = server.tokens.encode({ seq: result.seq, after: result.next, ...(result.remaining !== undefined ? { remaining: result.remaining } : {}) }, query);
    if (result.remaining !== undefined) meta.remainingItemCount = result.remaining;
  }
  if (sel.shard) meta.shardInfo = { selector: sel.shard };
  return { items: result.items, meta };
}

type ListMeta = { resourceVersion: string; continue?: string; remainingItemCount?: number; shardInfo?: { selector: string } };

/** A list's answer: a Table when asked for, else the kind's list, assembled from each object's shared encoding. */
async function sendList(r: Request, items: readonly StoredObject[], meta: ListMeta): Promise<void> {
  const { route } = r;
  const table = wantsTable(r.req.headers.accept);
  if (table) {
    send(r.res, 200, tableFor(route.kind, items.map((s) => s.obj), { version: table, includeObject: Q.includeObject(r.url.searchParams), listMeta: meta }), r.out);
    return;
  }
  const v = apiVersion(route);
  const head = `{"kind":${JSON.stringify(route.kind.listKind)},"apiVersion":${JSON.stringify(v)},"metadata":${JSON.stringify(meta)},"items":[`;
  // The page is assembled from each object's cached bytes: no string of the whole page is built.
  const parts: Buffer[] = [Buffer.from(head)];
  items.forEach((s, i) => {
    if (i > 0) parts.push(COMMA);
    // Encoded first: an object nobody has read is then encoded from its bytes, and its apiVersion
    // known, without decoding it.
    const json = encodeStored(s);
    parts.push(storedApiVersion(s) === v ? json : Buffer.from(JSON.stringify({ ...s.obj, apiVersion: v })));
  });
  parts.push(LIST_END);
  await sendParts(r.res, 200, parts, r.out);
}
