import { describe, expect, it } from 'vitest';
import { packJson, unpackJson } from '../../src/log/codec.js';
import { JsonLines, msgpackToJson } from '../../src/log/msgpack-json.js';
import { stampVersion } from '../../src/log/stamp.js';

/*
 * The JSON of a stored value made straight from its msgpack bytes must be, byte for byte, what
 * decoding it and JSON.stringify give; where it cannot promise that it must say so (undefined).
 */

const slow = (bytes: Buffer) => JSON.stringify(unpackJson(bytes));

const exact: [string, unknown][] = [
  ['null, booleans', [null, true, false]],
  ['small, negative and boundary integers', [0, 1, 9, 10, 127, 128, 255, 256, 65535, 65536, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31)]],
  ['integers past 32 bits and floats', [2 ** 32, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER, -(2 ** 40), 1.5, -2.25, 0.1, 1e21, 1e-7, 1e300, -0, 5e-324]],
  ['strings JSON escapes', ['"', '\\', '\b\f\n\r\t', '\u0000\u0001\u001f', '\u007f', 'a"b\\c\nd', `${'x'.repeat(40)}"${'y'.repeat(40)}`, `${'x'.repeat(40)}\u0002`]],
  ['unicode as UTF-8', ['ключ 🎉', 'ü'.repeat(50), '\u2028\u2029', '\ufeff', `${'🎉'.repeat(20)}`]],
  ['strings of every msgpack length form', ['', 'a'.repeat(31), 'a'.repeat(32), 'a'.repeat(255), 'a'.repeat(256), 'a'.repeat(65535), 'a'.repeat(65536)]],
  ['empties and nesting', { object: {}, array: [], deep: [[[{ a: [{ b: {} }] }]]] }],
  ['maps and arrays past 15 and 65535 entries', { small: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, i])), big: Array.from({ length: 70_000 }, (_, i) => i % 3) }],
  ['numeric-looking keys and key order', JSON.parse('{"b":1,"2":2,"a":3,"1":4,"0012":5}')],
  ['an own "__proto__" key', JSON.parse('{"__proto__": {"polluted": true}, "plain": 1}')],
  ['a top-level string, number, array', 'just a string'],
  ['an Event', { kind: 'Event', apiVersion: 'events.orch.io/v1', metadata: { name: 'e', namespace: 'default', labels: { 'orch.io/part-of': 'x' } }, note: 'hello\n"world"', series: { count: 3 } }],
];

describe('msgpackToJson', () => {
  it.each(exact)('%s: the same bytes as decode + JSON.stringify', (_name, value) => {
    const bytes = packJson(value);
    const out = msgpackToJson(bytes);
    expect(out).toBeDefined();
    expect(out!.json.toString('utf8')).toBe(slow(bytes));
  });

  it('notes the top-level apiVersion, of any string length, and only the top-level one', () => {
    expect(msgpackToJson(packJson({ kind: 'X', apiVersion: 'events.orch.io/v1', spec: {} }))!.apiVersion).toBe('events.orch.io/v1');
    const long = `${'g'.repeat(40)}.orch.io/v1`;
    expect(msgpackToJson(packJson({ apiVersion: long }))!.apiVersion).toBe(long);
    expect(msgpackToJson(packJson({ kind: 'X', spec: { apiVersion: 'v1' } }))!.apiVersion).toBeUndefined();
    expect(msgpackToJson(packJson({ apiVersion: 3 }))!.apiVersion).toBeUndefined();
  });

  it.each([
    ['binary', { data: Buffer.from([1, 2, 3]) }],
    ['undefined (an extension)', { a: undefined }],
    ['a Date (an extension)', { at: new Date(0) }],
    ['a BigInt (64-bit)', { n: 2n ** 63n - 1n }],
    ['a lone surrogate (not well-formed UTF-8)', { s: 'a\ud800b' }],
    ['a long string with a lone surrogate', { s: `${'x'.repeat(40)}\udfff` }],
    ['a non-string map key', new Map<unknown, unknown>([[1, 'one']])],
  ])('says it cannot when the bytes hold %s', (_name, value) => {
    expect(msgpackToJson(packJson(value))).toBeUndefined();
  });

  it('says it cannot for truncated or trailing bytes', () => {
    const bytes = packJson({ a: 'hello', b: [1, 2, 3] });
    expect(msgpackToJson(bytes.subarray(0, bytes.length - 2))).toBeUndefined();
    expect(msgpackToJson(Buffer.concat([bytes, Buffer.from([0xc0])]))).toBeUndefined();
  });
});

describe('JsonLines', () => {
  it('writes many values as JSON lines into one buffer, each what decode + JSON.stringify give, and takes none it cannot write exactly', () => {
    const lines = new JsonLines();
    const values = exact.map(([, v]) => packJson(v));
    // A range of a larger buffer, as a checkpoint part holds its objects one after another.
    const joined = Buffer.concat(values);
    let at = 0;
    for (const v of values) {
      expect(lines.add(joined, at, at + v.length)).toBe(true);
      at += v.length;
    }
    expect(lines.add(packJson({ data: Buffer.from([1]) }))).toBe(false);
    expect(lines.add(joined, 0, values[0].length + 1)).toBe(false);
    lines.addText('{"written":"another way"}\n');
    const text = lines.take().toString('utf8');
    expect(text).toBe(values.map((v) => slow(v) + '\n').join('') + '{"written":"another way"}\n');
    expect(lines.length).toBe(0);
    expect(lines.add(packJson({ again: 1 }))).toBe(true);
    expect(lines.take().toString()).toBe('{"again":1}\n');
  });
});

describe('msgpackToJson with a version to stamp', () => {
  const stampedSlow = (bytes: Buffer, version: number) => JSON.stringify(stampVersion(unpackJson(bytes), version));
  it.each([
    ['metadata without a resourceVersion: it goes after the last field', { kind: 'Event', metadata: { name: 'e', labels: { a: 'b' } }, note: 'x' }],
    ['a resourceVersion in the middle: replaced where it is', { metadata: { name: 'e', resourceVersion: '7', uid: 'u' }, spec: {} }],
    ['a resourceVersion that is not a string', { metadata: { resourceVersion: 12345678901234 } }],
    ['empty metadata', { metadata: {} }],
    ['metadata that is not a map', { metadata: ['x'], data: { metadata: { name: 'deep' } } }],
    ["a nested metadata is not the object's", { spec: { template: { metadata: { name: 't' } } }, metadata: { name: 'top' } }],
    ['no metadata at all', { kind: 'X' }],
    ['a value that is not a map', [{ metadata: { name: 'in an array' } }]],
  ])("%s: the stamped object's JSON", (_name, value) => {
    const bytes = packJson(value);
    for (const version of [1, 42, 9_007_199_254_740_991]) expect(msgpackToJson(bytes, version)?.json.toString()).toBe(stampedSlow(bytes, version));
  });

  it('JsonLines stamps each line with its version', () => {
    const lines = new JsonLines();
    const bytes = packJson({ metadata: { name: 'a', resourceVersion: '1' } });
    lines.add(bytes, 0, bytes.length, 5);
    lines.add(bytes);
    expect(lines.take().toString()).toBe('{"metadata":{"name":"a","resourceVersion":"5"}}\n{"metadata":{"name":"a","resourceVersion":"1"}}\n');
  });

  it.each([
    ['first in metadata', { metadata: { managedFields: [{ manager: 'm' }], name: 'a' }, spec: { managedFields: 'kept' } }],
    ['last in metadata', { metadata: { name: 'a', managedFields: [{ manager: 'm' }] } }],
    ['alone in metadata', { kind: 'X', metadata: { managedFields: [] } }],
    ['absent', { metadata: { name: 'a' } }],
  ])('JsonLines without managedFields, %s: what dropping them from the decoded object gives', (_name, value: any) => {
    const bytes = packJson(value);
    const { managedFields: _m, ...metadata } = value.metadata;
    for (const version of [undefined, 7]) {
      const lines = new JsonLines(true);
      expect(lines.add(bytes, 0, bytes.length, version)).toBe(true);
      const expected = { ...value, metadata: { ...metadata, ...(version === undefined ? {} : { resourceVersion: String(version) }) } };
      expect(lines.take().toString()).toBe(JSON.stringify(expected) + '\n');
    }
  });
});
