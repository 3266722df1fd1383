import { describe, expect, it } from 'vitest';
import { KeyIndex } from '../../src/store/key-index.js';

describe('KeyIndex', () => {
  const idx = new KeyIndex();
  idx.record('k', 3, false);
  idx.record('k', 7, false);
  idx.record('k', 9, true);
  idx.record('k', 12, false);

  it.each([
    ['before the first write', 2, undefined],
    ['at the create', 3, 3],
    ['between writes', 5, 3],
    ['at the update', 7, 7],
    ['after the delete', 10, undefined],
    ['after re-create', 100, 12],
  ])('%s', (_name, rv, want) => {
    expect(idx.at('k', rv)).toBe(want);
  });

  it('before() finds the previous version of a write', () => {
    expect(idx.before('k', 7)).toBe(3);
    expect(idx.before('k', 12)).toBeUndefined();
    expect(idx.at('other', 5)).toBeUndefined();
  });
});
