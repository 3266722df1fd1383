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

  it('keys added after every other (names made in order), mixed with inserts before them and deletes of the last, stay sorted and unique', () => {
    const s = new SortedKeys();
    const ref = new Set<string>();
    const pad = (i: number) => `ev-${String(i).padStart(6, '0')}`;
    for (let i = 0; i < 3000; i++) {
      s.add(pad(2 * i));
      ref.add(pad(2 * i));
      // An odd name lands inside an earlier chunk; re-adding the newest one is no change.
      if (i % 97 === 0) {
        s.add(pad(i | 1));
        ref.add(pad(i | 1));
      }
      if (i % 13 === 0) s.add(pad(2 * i));
      // The newest key deleted: the next append follows the one before it.
      if (i % 211 === 0) {
        s.delete(pad(2 * i));
        ref.delete(pad(2 * i));
      }
    }
    const expected = [...ref].sort();
    expect(s.toArray()).toEqual(expected);
    expect(s.size).toBe(expected.length);
    expect(s.has(pad(2 * 211))).toBe(false);
    expect([...s.range('ev-', pad(5000))][0]).toBe(expected[expected.indexOf(pad(5000)) + 1]);
  });

  it('names made in order but not in key order (seed-9, seed-10, …), with deletes and re-adds anywhere, stay sorted and unique', () => {
    const s = new SortedKeys();
    const ref = new Set<string>();
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 20_000; i++) {
      const k = `default/seed-${i}`;
      s.add(k);
      ref.add(k);
      // Deletes and re-adds elsewhere move the chunks under the place the last add remembers.
      if (rnd(5) === 0) {
        const d = `default/seed-${rnd(i + 1)}`;
        s.delete(d);
        ref.delete(d);
      }
      if (rnd(7) === 0) {
        const a = `default/seed-${rnd(i + 1)}`;
        s.add(a);
        ref.add(a);
      }
      if (rnd(11) === 0) s.add(k);
    }
    const expected = [...ref].sort();
    expect(s.toArray()).toEqual(expected);
    expect(s.size).toBe(expected.length);
    for (const k of expected.slice(0, 500)) expect(s.has(k)).toBe(true);
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
