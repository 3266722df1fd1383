import { describe, expect, it } from 'vitest';
import { packJson } from '../../src/log/codec.js';
import { msgpackPath, stringsAt } from '../../src/log/msgpack-path.js';
import { mulberry32 } from '../helpers/rng.js';

/*
 * stringsAt against the decoded value over many generated objects: every string reached through maps
 * is found, every other path (missing, through an array or a scalar, to a non-string) is undefined,
 * whatever the values it steps over hold: every msgpack width of strings, numbers, maps and arrays.
 * Bytes cut anywhere give the value or undefined, never a throw or a wrong string.
 */

/** One path's answer. */
const stringAt = (b: Buffer, path: readonly Buffer[]): string | undefined => stringsAt(b, [path])[0];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function generator(next: () => number) {
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const text = (): string => 'é€k🎉'.repeat(int(3)) + 'x'.repeat(pick([0, 1, 5, 20, 31, 32, 40, 255, 256, 300, 65535, 65536, 70000]));
  const number = (): number => pick([int(128), -1 - int(32), int(256), int(65536), int(2 ** 32), -int(32768), -int(2 ** 31), int(2 ** 53), next() * 1e10, 0.5]);
  const value = (depth: number): Json => {
    const r = next();
    if (depth > 2 || r < 0.35) return pick([null, true, false, number(), text(), text()]);
    if (r < 0.49) return Array.from({ length: pick([0, 2, 15, 16]) }, () => value(depth + 1));
    if (r < 0.5) return Array.from({ length: 70000 }, () => int(300)); // array32
    const o: Record<string, Json> = {};
    for (let i = 0, n = depth > 1 ? pick([0, 1, 3]) : pick([0, 1, 3, 15, 16, 20]); i < n; i++) o[pick(['k', 'metadata', 'name', 'ключ', 'a'.repeat(40)]) + i] = value(depth + 1);
    return o;
  };
  return { value };
}

/** Every path of keys through maps, with what it reaches. */
function* paths(v: Json, at: string[] = []): Generator<[string[], Json]> {
  if (at.length > 0) yield [at, v];
  if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) yield* paths(x, [...at, k]);
}

describe('stringsAt', () => {
  it('finds every string reached through maps, and nothing else, in generated objects', () => {
    const g = generator(mulberry32(40));
    for (let round = 0; round < 30; round++) {
      const v = { metadata: g.value(1), spec: g.value(0), x0: g.value(1) };
      const bytes = packJson(v);
      for (const [path, leaf] of paths(v)) {
        expect(stringAt(bytes, msgpackPath(...path))).toBe(typeof leaf === 'string' ? leaf : undefined);
        expect(stringAt(bytes, msgpackPath(...path, 'missing'))).toBeUndefined();
      }
      expect(stringAt(bytes, msgpackPath('absent'))).toBeUndefined();
      // All of them in one walk, with missing ones among them, in a shuffled order.
      const all = [...paths(v)].flatMap(([path, leaf]) => [[path, typeof leaf === 'string' ? leaf : undefined] as const, [[...path, 'missing'], undefined] as const]);
      const order = all.map((x) => [x, Math.sin(round * 1000 + all.indexOf(x))] as const).sort((a, b) => a[1] - b[1]);
      const asked = order.map(([[path]]) => msgpackPath(...path));
      expect(stringsAt(bytes, asked)).toEqual(order.map(([[, leaf]]) => leaf));
    }
  });

  it('reads an Event as expiry does: its times, without the rest', () => {
    const e = {
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { name: 'e', annotations: { eventTime: '2020-01-01T00:00:00Z' }, creationTimestamp: '2031-04-05T06:07:08Z' },
      eventTime: '2031-04-05T06:07:09.123456Z',
      series: { count: 2, lastObservedTime: '2031-04-05T06:07:10.000000Z' },
    };
    const b = packJson(e);
    expect(stringAt(b, msgpackPath('metadata', 'creationTimestamp'))).toBe('2031-04-05T06:07:08Z');
    expect(stringAt(b, msgpackPath('eventTime'))).toBe('2031-04-05T06:07:09.123456Z');
    expect(stringAt(b, msgpackPath('series', 'lastObservedTime'))).toBe('2031-04-05T06:07:10.000000Z');
    expect(stringAt(b, msgpackPath('series', 'count'))).toBeUndefined();
    expect(stringAt(b, msgpackPath('metadata', 'eventTime'))).toBeUndefined();
    // One walk: a value found inside metadata, with keys after it there, then the top-level ones.
    const later = packJson({ metadata: { creationTimestamp: 'c', name: 'n', labels: { a: 'b' } }, note: 'x', series: { lastObservedTime: 's' }, eventTime: 'e', z: 1 });
    expect(stringsAt(later, [msgpackPath('metadata', 'creationTimestamp'), msgpackPath('series', 'lastObservedTime'), msgpackPath('eventTime')])).toEqual(['c', 's', 'e']);
    expect(stringsAt(later, [msgpackPath('eventTime'), msgpackPath('metadata', 'labels', 'a'), msgpackPath('metadata', 'labels'), msgpackPath('z')])).toEqual(['e', 'b', undefined, undefined]);
    // After values of every wide kind, stepped over: array16/32, str16/32, map16, bin, floats, 64-bit ints.
    const wide = packJson({
      a16: Array(300).fill(-1),
      a32: Array(70_000).fill(0.5),
      s16: 'x'.repeat(300),
      s32: 'y'.repeat(70_000),
      m16: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, [i, { n: -(2 ** 40) }]])),
      bin: new Uint8Array(300),
      eventTime: 'found',
    });
    expect(stringAt(wide, msgpackPath('eventTime'))).toBe('found');
    expect(stringAt(wide, msgpackPath('m16', 'k19'))).toBeUndefined();
  });

  it('gives the value or undefined for bytes cut anywhere, never a throw', () => {
    const v = { a: [1, 'two', { three: 3.5 }], metadata: { creationTimestamp: '2031-04-05T06:07:08Z', long: 'y'.repeat(300) }, z: 'last' };
    const bytes = packJson(v);
    for (let n = 0; n <= bytes.length; n++) {
      const cut = bytes.subarray(0, n);
      expect([undefined, '2031-04-05T06:07:08Z']).toContain(stringAt(cut, msgpackPath('metadata', 'creationTimestamp')));
      expect([undefined, 'last']).toContain(stringAt(cut, msgpackPath('z')));
    }
    expect(stringAt(Buffer.from([0xc1]), msgpackPath('a'))).toBeUndefined();
    expect(stringAt(Buffer.alloc(0), msgpackPath('a'))).toBeUndefined();
  });
});
