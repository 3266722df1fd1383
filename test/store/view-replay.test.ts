/**
 * A startup replay defers the sorted key sets to one sort at the end (View.beginReplay/endReplay).
 * Whatever the mix of creates, updates and deletes, and whatever the view held before, the result
 * must equal folding the same entries one by one.
 */
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/log/log.js';
import { View } from '../../src/store/view.js';

function entries(seed: number, count: number, from: number): LogEntry[] {
  let x = seed;
  const rand = (n: number) => (x = (x * 1103515245 + 12345) % 2 ** 31) % n;
  const collections = ['g/a', 'g/b', '/namespaces'];
  const live = new Set<string>();
  const out: LogEntry[] = [];
  for (let i = 0; i < count; i++) {
    const key = `${collections[rand(3)]}/ns${rand(3)}/k${rand(40)}`;
    const del = live.has(key) && rand(4) === 0;
    if (del) live.delete(key);
    else live.add(key);
    out.push({ seq: from + i, type: del ? 'delete' : 'put', key, value: { apiVersion: 'v1', kind: 'X', metadata: { name: key } } });
  }
  return out;
}

const shape = (v: View) => ({
  objects: Array.from(v.objects(), (s) => s.key).sort(),
  collections: [...v.collections]
    .map(([c, k]) => [c, [...k.range('')]])
    .filter(([, k]) => k.length > 0)
    .sort(),
  history: [...v.history].map(([c, k]) => [c, [...k.range('')]]).sort(),
  revisions: [...v.history].flatMap(([c, keys]) => [...keys.range('')].map((s) => [`${c}/${s}`, v.slotsOf(c)?.get(s)?.list()])).sort(),
});

describe('view replay', () => {
  for (const [name, before, count] of [
    ['from empty, creates only', 0, 60],
    ['from empty, with deletes', 0, 600],
    ['on top of a folded state', 300, 600],
  ] as const) {
    it(`ends equal to folding entry by entry: ${name}`, () => {
      for (const seed of [1, 7, 42]) {
        const head = entries(seed, before, 1);
        const tail = entries(seed + 1000, count, before + 1).filter((e) => count > 60 || e.type === 'put');
        const incremental = new View();
        for (const e of [...head, ...tail]) incremental.apply(e);
        const replayed = new View();
        for (const e of head) replayed.apply(e);
        replayed.beginReplay();
        for (const e of tail) replayed.apply(e);
        replayed.endReplay();
        expect(shape(replayed)).toEqual(shape(incremental));
        // And it goes on exactly the same afterwards.
        const next = entries(seed + 2000, 50, before + count + 1);
        for (const e of next) {
          incremental.apply(e);
          replayed.apply(e);
        }
        expect(shape(replayed)).toEqual(shape(incremental));
      }
    });
  }
});
