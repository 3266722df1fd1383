import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PatchError } from '../../src/patch/errors.js';
import { applyJsonPatch, MAX_OPERATIONS } from '../../src/patch/json-patch.js';
import { formatPointer, parsePointer } from '../../src/patch/json-pointer.js';

interface Case {
  comment?: string;
  doc?: unknown;
  patch?: unknown;
  expected?: unknown;
  error?: string;
  disabled?: boolean;
}

const load = (name: string): Case[] => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as Case[];

/**
 * Records of the suite skipped on purpose. Each disabled record is disabled upstream: the suite's
 * authors mark them as not decided by RFC 6902 (duplicate members in an operation are a JSON
 * parsing matter, which our JSON decoder reports as a duplicate field; the others are old and
 * superseded by enabled records). They are still run below and must not crash.
 */
const DISABLED_UPSTREAM = new Set(['Toplevel scalar values OK?', 'Whole document', 'duplicate ops', 'A.13 Invalid JSON Patch Document']);

describe.each(['tests.json', 'spec_tests.json'])('RFC 6902 suite %s', (file) => {
  const cases = load(file).filter((c) => c.patch !== undefined);
  it.each(cases.map((c, i) => [c.comment ?? `record ${i}`, c] as const))('%s', (_name, c) => {
    if (c.disabled) {
      expect(DISABLED_UPSTREAM.has(c.comment ?? '')).toBe(true);
      try {
        applyJsonPatch(c.doc, c.patch);
      } catch (err) {
        expect(err).toBeInstanceOf(PatchError);
      }
      return;
    }
    const before = JSON.stringify(c.doc);
    if (c.error !== undefined) {
      expect(() => applyJsonPatch(c.doc, c.patch)).toThrow(PatchError);
    } else {
      expect(applyJsonPatch(c.doc, c.patch)).toEqual(c.expected ?? c.doc);
    }
    // The input document is never changed, even by a failing patch.
    expect(JSON.stringify(c.doc)).toBe(before);
  });
});

describe('JSON patch errors', () => {
  const code = (doc: unknown, patch: unknown): string => {
    try {
      applyJsonPatch(doc, patch);
    } catch (err) {
      return (err as PatchError).code;
    }
    return 'none';
  };

  it.each([
    ['a patch that is not a list', { op: 'add' }, 'BadPatch'],
    ['an operation that is not an object', [1], 'BadPatch'],
    ['a failing test', [{ op: 'test', path: '/a', value: 2 }], 'Unprocessable'],
    ['a missing path', [{ op: 'remove', path: '/nope' }], 'Unprocessable'],
    ['an unknown op', [{ op: 'frob', path: '/a' }], 'Unprocessable'],
    ['add without value', [{ op: 'add', path: '/b' }], 'Unprocessable'],
    ['a pointer without leading slash', [{ op: 'add', path: 'b', value: 1 }], 'Unprocessable'],
  ])('%s → %s', (_n, patch, expected) => {
    expect(code({ a: 1 }, patch)).toBe(expected);
  });

  it('refuses more operations than Kubernetes allows', () => {
    const ops = Array.from({ length: MAX_OPERATIONS + 1 }, () => ({ op: 'test', path: '', value: {} }));
    expect(code({}, ops)).toBe('TooLarge');
  });

  it('applies all or nothing: a later failure leaves no earlier change visible', () => {
    const doc = { a: 1 };
    expect(() =>
      applyJsonPatch(doc, [
        { op: 'replace', path: '/a', value: 2 },
        { op: 'test', path: '/a', value: 3 },
      ]),
    ).toThrow(PatchError);
    expect(doc).toEqual({ a: 1 });
  });

  it('never reaches an object prototype through __proto__', () => {
    const out = applyJsonPatch({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(out)).toEqual(['__proto__']);
  });
});

describe('JSON pointer', () => {
  it.each([
    ['', []],
    ['/a~1b/m~0n/0', ['a/b', 'm~n', '0']],
    ['/', ['']],
  ])('%j parses and formats back', (text, tokens) => {
    expect(parsePointer(text)).toEqual(tokens);
    expect(formatPointer(tokens)).toBe(text);
  });

  it('rejects a lone ~', () => {
    expect(() => parsePointer('/a~2')).toThrow(PatchError);
  });
});
