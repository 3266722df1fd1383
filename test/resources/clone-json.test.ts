import { describe, expect, it } from 'vitest';
import { cloneJson } from '../../src/api/json-access.js';

describe('cloneJson', () => {
  it('copies every level, so changing the copy leaves the original as it was', () => {
    const original = { a: [1, { b: 'x' }, null], c: { d: { e: true } }, f: 2.5 };
    const copy = cloneJson(original);
    expect(copy).toEqual(original);
    (copy.a[1] as { b: string }).b = 'changed';
    copy.c.d.e = false;
    expect(original).toEqual({ a: [1, { b: 'x' }, null], c: { d: { e: true } }, f: 2.5 });
  });

  it('keeps an own "__proto__" key as a plain key and never touches a prototype', () => {
    const parsed = JSON.parse('{"spec":{"__proto__":{"polluted":1},"plain":2}}');
    const copy = cloneJson(parsed);
    expect(Object.keys(copy.spec)).toEqual(['__proto__', 'plain']);
    expect(Object.getPrototypeOf(copy.spec)).toBe(Object.prototype);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('returns scalars as they are and copies byte arrays', () => {
    for (const v of [null, undefined, 0, 'x', false]) expect(cloneJson(v)).toBe(v);
    const bytes = Buffer.from('abc');
    const copy = cloneJson({ bytes }).bytes;
    expect(copy).not.toBe(bytes);
    expect([...copy]).toEqual([...bytes]);
  });
});
