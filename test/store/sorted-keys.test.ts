import { describe, expect, it } from 'vitest';
import { SortedKeys } from '../../src/store/sorted-keys.js';

describe('SortedKeys', () => {
  it('keeps keys sorted and unique across chunk splits', () => {
    const s = new SortedKeys();
    const keys = Array.from({ length: 5000 }, (_, i) => `ns${i % 7}/obj-${(i * 7919) % 5000}`);
    for (const k of keys) s.add(k);
    const expected = [...new Set(keys)].sort();
    expect([...s.range('')]).toEqual(expected);
    expect(s.size).toBe(expected.length);
  });

  it('ranges by prefix and starts after a key', () => {
    const s = SortedKeys.of(['a/1', 'a/2', 'a-b/1', 'b/1', 'a/3']);
    expect([...s.range('a/')]).toEqual(['a/1', 'a/2', 'a/3']);
    expect([...s.range('a/', 'a/1')]).toEqual(['a/2', 'a/3']);
    expect([...s.range('', 'a/3')]).toEqual(['b/1']);
    expect([...s.range('c/')]).toEqual([]);
  });

  it('deletes and reports membership', () => {
    const s = SortedKeys.of(Array.from({ length: 2000 }, (_, i) => String(i).padStart(5, '0')));
    for (let i = 0; i < 2000; i += 2) s.delete(String(i).padStart(5, '0'));
    expect(s.size).toBe(1000);
    expect(s.has('00001')).toBe(true);
    expect(s.has('00002')).toBe(false);
    expect([...s.range('')][0]).toBe('00001');
  });

  it('a continue key that was deleted still resumes after its position', () => {
    const s = SortedKeys.of(['x/a', 'x/b', 'x/c']);
    s.delete('x/b');
    expect([...s.range('x/', 'x/b')]).toEqual(['x/c']);
  });
});

describe('toArray', () => {
  it('is every key in order, a copy the set does not change afterwards', () => {
    const s = SortedKeys.of(Array.from({ length: 2000 }, (_, i) => `k${String(i).padStart(5, '0')}`).reverse());
    const all = s.toArray();
    expect(all).toEqual([...s.range('')]);
    expect(all).toHaveLength(2000);
    s.add('k00000a');
    s.delete('k00001');
    expect(all).toHaveLength(2000);
    expect(all[1]).toBe('k00001');
    expect(new SortedKeys().toArray()).toEqual([]);
  });
});
