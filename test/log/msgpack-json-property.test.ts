import { describe, expect, it } from 'vitest';
import { packJson, unpackJson } from '../../src/log/codec.js';
import { JsonLines, msgpackToJson, transcodeInto } from '../../src/log/msgpack-json.js';
import { mulberry32 as random } from '../helpers/rng.js';

/*
 * The transcoder against decode + JSON.stringify over many generated values: strings of every
 * length around where it switches from byte-by-byte to four-bytes-at-a-time and native copies,
 * with the bytes JSON escapes, and non-ASCII, at every position of a word; integers of every
 * msgpack width, floats as JSON.stringify formats them, nested and empty maps and arrays. The
 * bytes sit at every offset of a larger buffer, as a checkpoint part's objects do.
 */

const ALPHABET = ['a', 'b', 'Z', '0', ' ', '-', '/', '"', '\\', '\n', '\t', '\u0000', '\u0001', '\u001f', '\u007f', 'é', '€', 'ключ', '🎉', '\u2028', '\ufeff', 'x'.repeat(7)];

function generators(next: () => number) {
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  /** Mostly plain ASCII, as objects hold, sometimes a byte JSON escapes or a non-ASCII one. */
  const text = (): string => {
    const lengths = [0, 1, 3, 4, 5, 8, 15, 31, 32, 33, 63, 64, 95, 96, 97, 126, 127, 128, 129, 130, 131, 200, 255, 256, 300, 700];
    const n = next() < 0.5 ? int(40) : pick(lengths);
    const plain = next() < 0.4;
    let s = '';
    while (s.length < n) s += plain || next() < 0.9 ? String.fromCharCode(0x61 + int(26)) : pick(ALPHABET);
    return s;
  };
  const number = (): number =>
    pick([
      () => int(128),
      () => -1 - int(32),
      () => int(256),
      () => int(65536),
      () => int(2 ** 32),
      () => -int(128),
      () => -int(32768),
      () => -int(2 ** 31),
      () => int(2 ** 53) * (next() < 0.5 ? -1 : 1),
      () => (next() - 0.5) * 10 ** (int(60) - 30),
      () => pick([0.1, 1e21, 1e-7, 1e-6, 123e20, 5e-324, Number.MAX_VALUE, -0, 2 ** 31, 2 ** 32, -(2 ** 31) - 1, 0.30000000000000004, NaN, Infinity, -Infinity]),
    ])();
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 4 || r < 0.35) return text();
    if (r < 0.55) return number();
    if (r < 0.62) return pick([null, true, false]);
    if (r < 0.8) return Array.from({ length: pick([0, 1, 2, 5, 16, 17]) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: pick([0, 1, 3, 8, 15, 16, 20]) }, () => [[...text()].slice(0, 40).join(''), value(depth + 1)]));
  };
  return { value, int };
}

/** Whether a string holds a lone surrogate: msgpackr writes it as bytes that are not UTF-8, which the transcoder says it cannot write. */
const lone = (v: unknown): boolean => (typeof v === 'string' ? /\p{Cs}/u.test(v) : typeof v === 'object' && v !== null && Object.entries(v).some(([k, x]) => lone(k) || lone(x)));

describe('msgpackToJson over generated values', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i: 300 values byte for byte as decode + JSON.stringify, at every offset of a buffer', (seed) => {
    const { value, int } = generators(random(seed));
    for (let i = 0; i < 300; i++) {
      const v = value(0);
      expect(lone(v)).toBe(false);
      const bytes = packJson(v);
      const expected = JSON.stringify(unpackJson(bytes));
      expect(msgpackToJson(bytes)?.json.toString('utf8')).toBe(expected);
      // The same bytes inside a larger buffer, at an offset that is not a word's, written after other JSON.
      const at = int(16);
      const input = Buffer.alloc(at + bytes.length + int(9), 0x22);
      bytes.copy(input, at);
      const o = int(13);
      const into = transcodeInto(input, at, at + bytes.length, Buffer.alloc(o + 1, 0x20), o);
      expect(into?.out.toString('utf8', o, into.end)).toBe(expected);
    }
  });

  it('writes many values one after another into one buffer as JSON lines', () => {
    const { value } = generators(random(99));
    const values = Array.from({ length: 500 }, () => value(0));
    const packed = values.map((v) => packJson(v));
    const all = Buffer.concat(packed);
    const lines = new JsonLines();
    let at = 0;
    for (const p of packed) {
      expect(lines.add(all, at, at + p.length)).toBe(true);
      at += p.length;
    }
    expect(lines.take().toString('utf8')).toBe(packed.map((p) => JSON.stringify(unpackJson(p)) + '\n').join(''));
  });

  it('finds a byte to escape, or one not ASCII, at every position of a long string', () => {
    for (const length of [127, 128, 129, 130, 131, 132, 300]) {
      for (let at = 0; at < length; at++) {
        for (const odd of ['"', '\\', '\n', '\u0000', '\u001f', 'é']) {
          const s = 'a'.repeat(at) + odd + 'b'.repeat(Math.max(0, length - at - 1));
          const bytes = packJson({ s });
          expect(msgpackToJson(bytes)?.json.toString('utf8')).toBe(JSON.stringify({ s }));
        }
      }
    }
  });
});

describe('JsonLines.addInside', () => {
  it('writes an object inside a line as JSON.stringify writes it there, stamped and without managedFields when asked; nothing when it cannot', () => {
    const object = { apiVersion: 'v1', kind: 'X', metadata: { name: 'a', managedFields: [{ manager: 'm' }], labels: { l: '"' } }, note: 'n'.repeat(200) };
    const lines = new JsonLines(true);
    expect(lines.addInside('{"patch":[{"value":', packJson(object), '}]}\n', 42)).toBe(true);
    expect(lines.addInside('{"x":', packJson({ data: Buffer.from([1]) }), '}\n')).toBe(false);
    const { managedFields: _hidden, ...metadata } = object.metadata;
    expect(lines.take().toString('utf8')).toBe(JSON.stringify({ patch: [{ value: { ...object, metadata: { ...metadata, resourceVersion: '42' } } }] }) + '\n');
  });
});
