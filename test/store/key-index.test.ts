import { describe, expect, it } from 'vitest';
import { Revisions } from '../../src/store/key-index.js';

/** Revisions recorded one by one, oldest first (a negative number is a delete). */
function revisionsOf(list: number[]): Revisions {
  const r = new Revisions(list[0]);
  for (const rev of list.slice(1)) r.record(Math.abs(rev), rev < 0);
  return r;
}

describe('Revisions', () => {
  const revs = new Revisions(3);
  revs.record(7, false);
  revs.record(9, true);
  revs.record(12, false);

  it.each([
    ['before the first write', 2, undefined],
    ['at the create', 3, 3],
    ['between writes', 5, 3],
    ['at the update', 7, 7],
    ['after the delete', 10, undefined],
    ['after re-create', 100, 12],
  ])('%s', (_name, rv, want) => {
    expect(revs.at(rv)).toBe(want);
  });

  it('a key written once holds its revision as a number; the list is oldest first', () => {
    const once = new Revisions(5);
    expect([once.older, once.list(), once.at(4), once.at(5)]).toEqual([undefined, [5], undefined, 5]);
    expect(revs.list()).toEqual([3, 7, -9, 12]);
    expect(revisionsOf([3, 7, -9, 12]).list()).toEqual([3, 7, -9, 12]);
  });

  it.each([
    ['below every revision', 3, [3, 7, -9, 12], 0],
    ['between puts: the put below stays as the state at h - 1', 8, [7, -9, 12], 7],
    ['right after a delete: it goes, absence needs no revision', 10, [12], 0],
    ['past every revision: the last put stays', 50, [12], 12],
  ])('compaction to a horizon %s', (_name, h, left, kept) => {
    const r = revisionsOf(revs.list());
    expect(r.keptAt(h) ?? 0).toBe(kept);
    expect(r.compact(h)).toBe(true);
    expect(r.list()).toEqual(left);
  });

  it.each([
    ['before the first write', 2, undefined],
    ['at the create: the one revision as a number', 5, 3],
    ['past the delete', 10, [3, 7, -9]],
    ['every revision', 12, [3, 7, -9, 12]],
  ])('up to a version %s: what a checkpoint at that version stores', (_name, rv, want) => {
    expect(revs.upTo(rv)).toEqual(want);
  });

  it('a key whose newest revision below the horizon is its delete is forgotten', () => {
    expect(revisionsOf([3, -4]).compact(5)).toBe(false);
    expect(revisionsOf([3, -4]).keptAt(5)).toBeUndefined();
  });
});
