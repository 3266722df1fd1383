/**
 * A page of a collection, with Kubernetes' semantics:
 *
 * | match        | no limit / first page                  | continue                                   |
 * |--------------|----------------------------------------|--------------------------------------------|
 * | unset, rv "" | newest (consistent)                    | the token's snapshot                       |
 * | unset, rv 0  | any (newest)                           | the token's snapshot                       |
 * | unset, rv N  | not older than N; with limit: Exact N  | 400 (rv with continue)                     |
 * | NotOlderThan | not older than N (rv 0: any)           | 422 (match with continue)                  |
 * | Exact        | the state at N                         | 422 (match with continue)                  |
 *
 * Every page of a list is read at the first page's version, whatever is written meanwhile. A token
 * whose version was compacted answers 410 with a fresh token that goes on after the same key from
 * the newest state (Kubernetes' inconsistent continuation). The refused combinations are refused
 * where the query is read (src/http/codec/query.ts).
 */
import type { KindStrategy } from '../api/strategy.js';
import type { ContinueTokens } from '../store/continue-token.js';
import { StoreError } from '../store/errors.js';
import { collectionOf, suffixOf } from '../api/object-keys.js';
import { listObjects, type ListQuery, type ListResult } from '../store/list.js';
import type { Store } from '../store/store.js';
import type { StoredObject } from '../store/stored-object.js';
import { planOf, settle, type VersionRequest } from './consistency.js';
import { badRequest, expired, storageReadError, tooLargeResourceVersion } from './errors.js';
import { qualified } from '../api/qualified.js';
import { selectionOf, type Selectors } from './selection.js';

export interface PageRequest extends VersionRequest {
  selectors: Selectors;
  limit?: number;
  continue?: string;
}

export interface ListMeta {
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
  shardInfo?: { selector: string };
}

export interface Page {
  items: readonly StoredObject[];
  meta: ListMeta;
}

const LIST_TOO_OLD = 'The resourceVersion for the provided list is too old.';
const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/**
 * The page a list asks for: with a limit, one page (from continue when given); without one, every
 * object (from continue on). Long: the table above, case by case, in the order a page is read.
 */
export async function listPage(store: Store, tokens: ContinueTokens, kind: KindStrategy, namespace: string | undefined, req: PageRequest): Promise<Page> {
  const sel = selectionOf(kind, req.selectors);
  const collection = collectionOf(kind);
  const prefix = kind.namespaced && namespace !== undefined ? suffixOf(namespace, '') : '';
  const query = [collection, prefix, sel.text].join('\0');
  const q: ListQuery = { collection, prefix };
  if (sel.matches) q.matches = sel.matches;
  if (sel.indexTerms) q.indexTerms = sel.indexTerms;
  if (req.limit) q.limit = req.limit;
  let continueSeq: number | undefined;
  let remaining: number | undefined;
  if (req.continue) {
    const p = tokens.decode(req.continue, query);
    if (!p) throw badRequest('invalid continue token: continue key is not valid');
    q.after = p.after;
    continueSeq = p.seq;
    remaining = p.remaining;
  }
  // A token past the horizon: 410 with one that goes on after the same key from the newest state.
  const continueExpired = () => expired(CONTINUE_TOO_OLD, tokens.encode({ seq: -1, after: q.after! }, query));
  const plan = planOf(store, {
    ...(req.resourceVersion !== undefined ? { resourceVersion: req.resourceVersion } : {}),
    ...(req.resourceVersionMatch ? { resourceVersionMatch: req.resourceVersionMatch } : {}),
    ...(continueSeq !== undefined ? { continueSeq } : {}),
    ...(req.limit !== undefined ? { limit: req.limit } : {}),
  });
  switch (plan.kind) {
    case 'tooLarge':
      throw tooLargeResourceVersion(plan.seq, store.appliedSeq, 0);
    case 'expired':
      throw plan.continue ? continueExpired() : expired(LIST_TOO_OLD);
    case 'at':
      q.atSeq = plan.seq;
      if (remaining !== undefined) q.remainingBefore = remaining;
      break;
    default:
      await settle(store, plan);
  }
  // Objects in range that cannot be read fail the list, each named (Kubernetes' StorageReadError).
  const failures = [...store.corruptUnder(collection, prefix)].map(([key, c]) => ({ key, seq: c.seq, why: c.message }));
  if (failures.length > 0) throw storageReadError(qualified(kind), `${collection}/${prefix}`, failures);
  let result: ListResult;
  try {
    result = await listObjects(store, q);
  } catch (err) {
    // Overtaken by a compaction while it read.
    if (err instanceof StoreError && err.code === 'COMPACTED') throw continueSeq !== undefined && q.after !== undefined ? continueExpired() : expired(LIST_TOO_OLD);
    throw err;
  }
  const meta: ListMeta = { resourceVersion: String(result.seq) };
  if (result.next !== undefined) {
    meta.continue = tokens.encode({ seq: result.seq, after: result.next, ...(result.remaining !== undefined ? { remaining: result.remaining } : {}) }, query);
    if (result.remaining !== undefined) meta.remainingItemCount = result.remaining;
  }
  if (sel.shard) meta.shardInfo = { selector: sel.shard };
  return { items: result.items, meta };
}
