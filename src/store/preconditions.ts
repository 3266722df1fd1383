/**
 * A write's precondition: what its writer knew when it decided, checked against the newest state
 * (committed + pending) in the same synchronous step as the append (writer.ts).
 */
import { StoreError } from './errors.js';

/**
 * How often a write is decided again when others wrote first (this replica's concurrent updates of
 * the key, or another replica's): each round some write lands, so this bounds the writers racing on
 * one key, not the time.
 */
export const MAX_TRIES = 64;

/** What a writer knew when it decided: the version it read (0 = "must not exist"). */
export type Expected = { seq: number } | 'absent' | 'any';

/** The key's newest state if it is in the expected state; the StoreError a single server answers otherwise. */
export function checkExpected(key: string, cur: { seq: number } | undefined, expected: Expected): { seq: number } | undefined {
  if (expected === 'absent') {
    if (cur) throw new StoreError('KEY_EXISTS', key, `key ${key} exists at ${cur.seq}`, cur.seq);
  } else if (!cur) {
    throw new StoreError('NOT_FOUND', key, `key ${key} not found`);
  } else if (expected !== 'any' && cur.seq !== expected.seq) {
    throw new StoreError('CONFLICT', key, `key ${key} is at ${cur.seq}, not ${expected.seq}`, cur.seq);
  }
  return cur;
}
