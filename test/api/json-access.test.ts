import { describe, expect, it } from 'vitest';
import { hasKey, jsonEqual, setKey } from '../../src/api/json-access.js';

describe('jsonEqual', () => {
  it('compares objects by members whatever their order, arrays in order, and leaves out members set to undefined', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: 1, gone: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: null })).toBe(false);
    expect(jsonEqual({}, [])).toBe(false);
  });

  it('matches a "__proto__" member only against an own "__proto__" member, never the inherited prototype', () => {
    const withProto = JSON.parse('{"__proto__":{},"y":1}');
    expect(jsonEqual(withProto, { z: 1, y: 1 })).toBe(false);
    expect(jsonEqual(withProto, JSON.parse('{"y":1,"__proto__":{}}'))).toBe(true);
  });
});

describe('hasKey and setKey', () => {
  it('write and read "__proto__" as an own key, leaving the prototype alone', () => {
    const o: Record<string, unknown> = {};
    expect(hasKey(o, '__proto__')).toBe(false);
    setKey(o, '__proto__', { polluted: true });
    expect(hasKey(o, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
    expect(JSON.stringify(o)).toBe('{"__proto__":{"polluted":true}}');
    setKey(o, 'plain', 1);
    expect(o.plain).toBe(1);
  });
});
