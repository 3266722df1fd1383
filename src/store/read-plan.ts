/**
 * The read plan: what a get, a list or a watch reads, decided once from its options and the store's
 * versions, as ../shared/spec/api.md and Kubernetes' watch cache decide it. Pure: the caller does
 * what the plan says (reads, waits, or answers the error it names).
 *
 * | request                         | resourceVersion ""/"0"   | resourceVersion N                          |
 * |---------------------------------|--------------------------|--------------------------------------------|
 * | get                             | current                  | wait for N (not older than)                |
 * | get, match Exact                | —                        | at N (410 below the horizon, 504 past head)|
 * | list, no limit, no match        | current                  | wait for N                                 |
 * | list, limit, no match           | current                  | at N (as Exact)                            |
 * | list, NotOlderThan              | current                  | wait for N                                 |
 * | list, Exact                     | —                        | at N (410 below the horizon, 504 past head)|
 * | list, continue                  | the token's snapshot; below the horizon 410 with a fresh token; a    |
 * |                                 | fresh token's own (-1) continues from the current state              |
 * | watch                           | initial state, then      | the changes after N                        |
 * |                                 | changes (defaulted)      |                                            |
 * | watch, sendInitialEvents=true   | initial state now        | initial state not older than N             |
 * | watch, sendInitialEvents=false  | changes from head        | the changes after N                        |
 *
 * Option combinations Kubernetes refuses (a match without a version, continue with a version or with
 * watch, Exact on a watch) are refused before a plan is made, by src/http/codec/query.ts.
 */

/** What the plan is made from: the request's options, versions already read as numbers. */
export interface ReadRequest {
  /** The resourceVersion asked for; 0 or undefined: any ("" and "0"). */
  resourceVersion?: number;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  /** A continue token's version: the snapshot of the first page, -1 for the current state. */
  continueSeq?: number;
  limit?: number;
  watch?: boolean;
  sendInitialEvents?: boolean;
}

/** The store's versions: the oldest one still readable (horizon) and the newest applied (head). */
export interface StoreVersions {
  horizon: number;
  head: number;
}

export type ReadPlan =
  /** The newest state. */
  | { kind: 'current' }
  /**
   * The newest state once the view has caught up with the newest version any writer of the log made
   * (a consistent read, KEP-2340: on a log shared by replicas the head is read from it with a quorum).
   */
  | { kind: 'consistent' }
  /** The state at seq, read from the view and, for older revisions, the log. */
  | { kind: 'at'; seq: number }
  /** The newest state once the view has applied seq; past a short wait, 504 Too large resource version. */
  | { kind: 'wait'; seq: number }
  /** 410: seq is below the horizon. `continue`: the answer carries a fresh token to go on from the current state. */
  | { kind: 'expired'; seq: number; continue: boolean }
  /** 504 at once: seq is newer than anything applied (an Exact read does not wait, as etcd answers at once). */
  | { kind: 'tooLarge'; seq: number }
  /** A watch: initial state (not older than freshAs when given), then changes. */
  | { kind: 'watchInitial'; freshAs?: number }
  /** A watch of the changes after seq, replayed from the log. */
  | { kind: 'watchAfter'; seq: number };

/** An Exact read of seq: it must be applied already and not compacted. */
function exact(seq: number, v: StoreVersions): ReadPlan {
  if (seq > v.head) return { kind: 'tooLarge', seq };
  if (seq < v.horizon) return { kind: 'expired', seq, continue: false };
  return { kind: 'at', seq };
}

export function readPlan(r: ReadRequest, v: StoreVersions): ReadPlan {
  const rv = r.resourceVersion ?? 0;
  if (r.watch) {
    if (r.sendInitialEvents) return rv > 0 ? { kind: 'watchInitial', freshAs: rv } : { kind: 'watchInitial' };
    // sendInitialEvents=false (it comes with a match) from ""/"0": changes from now on.
    if (rv === 0) return r.resourceVersionMatch !== undefined ? { kind: 'watchAfter', seq: v.head } : { kind: 'watchInitial' };
    return { kind: 'watchAfter', seq: rv };
  }
  if (r.continueSeq !== undefined) {
    if (r.continueSeq === -1) return { kind: 'current' };
    if (r.continueSeq < v.horizon) return { kind: 'expired', seq: r.continueSeq, continue: true };
    return { kind: 'at', seq: r.continueSeq };
  }
  if (r.resourceVersion === undefined) return { kind: 'consistent' };
  if (rv === 0) return { kind: 'current' };
  // A paged list from a version without a match reads exactly that version, as Kubernetes does.
  if (r.resourceVersionMatch === 'Exact' || (r.resourceVersionMatch === undefined && r.limit !== undefined)) return exact(rv, v);
  return { kind: 'wait', seq: rv };
}
