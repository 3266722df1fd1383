/**
 * How fresh a read is: the read plan (src/store/read-plan.ts) decides from the request's version and
 * the store's; this waits where the plan says to. A read without a version is consistent (KEP-2340):
 * on a log shared by replicas the view first catches up with the newest version any of them wrote,
 * read from etcd with a quorum. A read "not older than" a version waits for the view briefly.
 */
import { readPlan, type ReadPlan, type ReadRequest } from '../store/read-plan.js';
import type { Store } from '../store/store.js';
import { tooLargeResourceVersion, unavailable } from './errors.js';

/** How long a read waits for a version the view has not reached yet (Kubernetes' watch cache: 3 s). */
const FRESHNESS_WAIT_MS = 3000;

/** A read's versions as the request gives them: resourceVersion unset is a consistent read, 0 any. */
export type VersionRequest = Pick<ReadRequest, 'resourceVersion' | 'resourceVersionMatch'>;

/** The read plan of r against the store's versions now: the oldest still readable and the newest applied. */
export const planOf = (store: Store, r: ReadRequest): ReadPlan => readPlan(r, { horizon: store.oldestVersion, head: store.appliedSeq });

/** Waits as a 'consistent' or 'wait' plan says; past the wait, 503 (consistent) or 504 Too large resource version. */
export async function settle(store: Store, plan: ReadPlan): Promise<void> {
  if (plan.kind === 'consistent') return waitConsistent(store);
  if (plan.kind === 'wait' && !(await store.waitFor(plan.seq, FRESHNESS_WAIT_MS))) throw tooLargeResourceVersion(plan.seq, store.appliedSeq, 1);
}

/** A replica that cannot reach etcd, or is too far behind, answers 503 with Retry-After. */
async function waitConsistent(store: Store): Promise<void> {
  let head: number | undefined;
  try {
    head = await store.headSeq();
  } catch (err) {
    throw unavailable(`cannot read the current resource version from storage: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (head !== undefined && !(await store.waitFor(head, FRESHNESS_WAIT_MS))) {
    throw unavailable(`storage is ahead of this server: it has applied ${store.appliedSeq} of ${head}`);
  }
}
