/**
 * The read plan (src/store/read-plan.ts) as a table of every combination ../shared/spec/api.md gives
 * resourceVersion, resourceVersionMatch, continue, limit, watch and sendInitialEvents, against a
 * store whose history runs from version 10 (the horizon) to 50 (the head).
 */
import { describe, expect, it } from 'vitest';
import { readPlan, type ReadPlan, type ReadRequest } from '../../src/store/read-plan.js';

const versions = { horizon: 10, head: 50 };

const rows: [string, ReadRequest, ReadPlan][] = [
  // get (no limit, no continue)
  ['get, rv unset: the newest, consistent', {}, { kind: 'consistent' }],
  ['get, rv 0: any, the newest', { resourceVersion: 0 }, { kind: 'current' }],
  ['get, rv N: not older than N', { resourceVersion: 30 }, { kind: 'wait', seq: 30 }],
  ['get, rv N past the head: waits for it', { resourceVersion: 60 }, { kind: 'wait', seq: 60 }],
  ['get, rv N NotOlderThan', { resourceVersion: 30, resourceVersionMatch: 'NotOlderThan' }, { kind: 'wait', seq: 30 }],
  ['get, rv 0 NotOlderThan: any', { resourceVersion: 0, resourceVersionMatch: 'NotOlderThan' }, { kind: 'current' }],
  ['get, rv N Exact: the state at N', { resourceVersion: 30, resourceVersionMatch: 'Exact' }, { kind: 'at', seq: 30 }],
  ['get, rv at the head Exact', { resourceVersion: 50, resourceVersionMatch: 'Exact' }, { kind: 'at', seq: 50 }],
  ['get, rv at the horizon Exact', { resourceVersion: 10, resourceVersionMatch: 'Exact' }, { kind: 'at', seq: 10 }],
  ['get, rv below the horizon Exact: 410', { resourceVersion: 9, resourceVersionMatch: 'Exact' }, { kind: 'expired', seq: 9, continue: false }],
  ['get, rv past the head Exact: 504 at once', { resourceVersion: 51, resourceVersionMatch: 'Exact' }, { kind: 'tooLarge', seq: 51 }],
  // list without pages
  ['list, rv unset', { limit: undefined }, { kind: 'consistent' }],
  ['list, rv N, no limit: not older than N', { resourceVersion: 20 }, { kind: 'wait', seq: 20 }],
  ['list, rv N NotOlderThan with a limit', { resourceVersion: 20, resourceVersionMatch: 'NotOlderThan', limit: 5 }, { kind: 'wait', seq: 20 }],
  ['list, rv N Exact', { resourceVersion: 20, resourceVersionMatch: 'Exact' }, { kind: 'at', seq: 20 }],
  ['list, rv below the horizon Exact: 410 without a token', { resourceVersion: 3, resourceVersionMatch: 'Exact' }, { kind: 'expired', seq: 3, continue: false }],
  ['list, rv past the head Exact: 504', { resourceVersion: 99, resourceVersionMatch: 'Exact' }, { kind: 'tooLarge', seq: 99 }],
  // list with pages
  ['list, limit, rv unset: the newest, consistent', { limit: 5 }, { kind: 'consistent' }],
  ['list, limit, rv 0: any', { resourceVersion: 0, limit: 5 }, { kind: 'current' }],
  ['list, limit, rv N, no match: exactly N', { resourceVersion: 20, limit: 5 }, { kind: 'at', seq: 20 }],
  ['list, limit, rv below the horizon, no match: 410', { resourceVersion: 5, limit: 5 }, { kind: 'expired', seq: 5, continue: false }],
  ['list, limit, rv past the head, no match: 504', { resourceVersion: 70, limit: 5 }, { kind: 'tooLarge', seq: 70 }],
  ["list, continue: the first page's snapshot", { continueSeq: 40, limit: 5 }, { kind: 'at', seq: 40 }],
  ['list, continue at the horizon', { continueSeq: 10, limit: 5 }, { kind: 'at', seq: 10 }],
  ['list, continue below the horizon: 410 with a fresh token', { continueSeq: 9, limit: 5 }, { kind: 'expired', seq: 9, continue: true }],
  ["list, a fresh token's continuation: the newest", { continueSeq: -1, limit: 5 }, { kind: 'current' }],
  ['list, continue without a limit', { continueSeq: 40 }, { kind: 'at', seq: 40 }],
  // watch
  ['watch, rv unset (defaulted to initial events)', { watch: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }, { kind: 'watchInitial' }],
  ['watch, rv unset, not defaulted', { watch: true }, { kind: 'watchInitial' }],
  ['watch, rv 0', { watch: true, resourceVersion: 0 }, { kind: 'watchInitial' }],
  ['watch, rv N: the changes after N', { watch: true, resourceVersion: 30 }, { kind: 'watchAfter', seq: 30 }],
  ['watch, rv below the horizon: after it (the engine answers 410)', { watch: true, resourceVersion: 2 }, { kind: 'watchAfter', seq: 2 }],
  ['watch, rv past the head: after it (waits for changes)', { watch: true, resourceVersion: 90 }, { kind: 'watchAfter', seq: 90 }],
  [
    'watch, sendInitialEvents=true, rv N: initial state not older than N',
    { watch: true, resourceVersion: 30, resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true },
    { kind: 'watchInitial', freshAs: 30 },
  ],
  ['watch, sendInitialEvents=true, rv 0', { watch: true, resourceVersion: 0, resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true }, { kind: 'watchInitial' }],
  ['watch, sendInitialEvents=false, rv unset: changes from the head', { watch: true, resourceVersionMatch: 'NotOlderThan', sendInitialEvents: false }, { kind: 'watchAfter', seq: 50 }],
  ['watch, sendInitialEvents=false, rv N: the changes after N', { watch: true, resourceVersion: 30, resourceVersionMatch: 'NotOlderThan', sendInitialEvents: false }, { kind: 'watchAfter', seq: 30 }],
];

describe('the read plan', () => {
  it.each(rows)('%s', (_name, request, plan) => {
    expect(readPlan(request, versions)).toEqual(plan);
  });

  it('follows the store: what is expired or too large depends on its horizon and head', () => {
    const exact = { resourceVersion: 30, resourceVersionMatch: 'Exact' as const };
    expect(readPlan(exact, { horizon: 31, head: 50 })).toEqual({ kind: 'expired', seq: 30, continue: false });
    expect(readPlan(exact, { horizon: 1, head: 29 })).toEqual({ kind: 'tooLarge', seq: 30 });
    expect(readPlan({ continueSeq: 30 }, { horizon: 31, head: 50 })).toEqual({ kind: 'expired', seq: 30, continue: true });
  });
});
