import { describe, expect, it } from 'vitest';
import { decodeJson, JsonSyntaxError, MAX_DEPTH } from '../../../src/http/codec/json-decode.js';

/** JSON.parse's verdict, the reference decodeJson must match exactly. */
function reference(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function ours(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: decodeJson(text).value };
  } catch (err) {
    if (err instanceof JsonSyntaxError) return { ok: false };
    throw err;
  }
}

describe('decodeJson accepts exactly what JSON.parse accepts, with the same values', () => {
  const valid: [string, string][] = [
    ['zero', '0'],
    ['negative zero', '-0'],
    ['fraction and exponent', '-12.5e-3'],
    ['capital exponent with plus', '1E+2'],
    ['integer past 2^53 rounds like JSON.parse', '123456789012345678901234567890'],
    ['number overflowing to Infinity', '1e400'],
    ['number underflowing to zero', '1e-400'],
    ['string', '"abc"'],
    ['empty string', '""'],
    ['every simple escape', '"\\" \\\\ \\/ \\b \\f \\n \\r \\t"'],
    ['unicode escape', '"\\u00e9\\u00E9"'],
    ['surrogate pair escape', '"\\ud83d\\ude00"'],
    ['lone surrogate escape', '"\\ud800"'],
    ['raw non-ASCII', '"é ☃ 😀"'],
    ['raw U+2028 and DEL', '"\u2028\u007f"'],
    ['escapes around plain runs', '"a\\nb\\tc\\u0041d"'],
    ['true', 'true'],
    ['false', 'false'],
    ['null', 'null'],
    ['empty array', '[]'],
    ['empty object', '{}'],
    ['nested', '{"a":{"b":[1,{"c":null}],"d":[]},"e":{}}'],
    ['empty key', '{"":1}'],
    ['integer-like keys reorder as in JSON.parse', '{"b":1,"2":2,"a":3,"1":4}'],
    ['all four whitespace characters', ' \t\n\r[ 1 ,\t2\n]\r\n '],
    ['whitespace inside an empty object', '{ \n}'],
    ['whitespace inside an empty array', '[ \t]'],
  ];
  const invalid: [string, string][] = [
    ['empty text', ''],
    ['only whitespace', ' \n'],
    ['leading zero', '01'],
    ['negative leading zero', '-01'],
    ['lone minus', '-'],
    ['plus sign', '+1'],
    ['bare fraction', '.5'],
    ['trailing decimal point', '1.'],
    ['decimal point then exponent', '1.e1'],
    ['exponent without digits', '1e'],
    ['exponent sign without digits', '1e+'],
    ['hex', '0x10'],
    ['NaN', 'NaN'],
    ['Infinity', 'Infinity'],
    ['double minus', '--1'],
    ['trailing comma in array', '[1,]'],
    ['trailing comma in object', '{"a":1,}'],
    ['empty array slot', '[1,,2]'],
    ['leading comma', '[,1]'],
    ['unquoted key', '{a:1}'],
    ['single-quoted string', "'a'"],
    ['number key', '{1:1}'],
    ['missing colon', '{"a" 1}'],
    ['missing value', '{"a":}'],
    ['missing comma between members', '{"a":1 "b":2}'],
    ['missing comma between elements', '[1 2]'],
    ['unterminated string', '"abc'],
    ['unterminated array', '[1'],
    ['unterminated object', '{"a":1'],
    ['unknown escape', '"\\x"'],
    ['short unicode escape', '"\\u12"'],
    ['bad hex digit', '"\\u12G4"'],
    ['backslash at the end', '"\\'],
    ['raw tab in string', '"a\tb"'],
    ['raw newline in string', '"a\nb"'],
    ['raw NUL in string', '"a\u0000b"'],
    ['truncated literal', 'tru'],
    ['misspelled literal', 'nul1'],
    ['literal with trailing letters', 'truex'],
    ['capitalised literal', 'True'],
    ['two top-level values', '{} {}'],
    ['trailing garbage', '[1]x'],
    ['closing bracket only', ']'],
    ['mismatched brackets', '[1}'],
    ['no-break space is not whitespace', '\u00a0{}'],
    ['byte order mark', '\ufeff{}'],
    ['vertical tab is not whitespace', '\u000b1'],
    ['comment', '/* c */ {}'],
  ];
  it.each(valid)('accepts %s', (_name, text) => {
    const want = reference(text);
    expect(want.ok).toBe(true);
    expect(ours(text)).toEqual(want);
  });
  it.each(invalid)('rejects %s', (_name, text) => {
    expect(reference(text).ok).toBe(false);
    expect(ours(text)).toEqual({ ok: false });
  });

  it('keeps the key order of JSON.parse', () => {
    const text = '{"b":1,"2":2,"a":3,"1":4,"b":5}';
    expect(Object.keys(decodeJson(text).value as object)).toEqual(Object.keys(JSON.parse(text) as object));
  });

  it('agrees with JSON.parse on thousands of mutated documents', () => {
    // A fixed-seed generator: the same cases on every run.
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const base = '{"a":[1,-2.5e3,true,false,null,"x\\n\\u0041"],"b":{"c":{}},"d":[]}';
    const alphabet = '{}[]":,0123456789.-+eEtrufalsn \\\t\nx';
    for (let k = 0; k < 5000; k++) {
      const chars = [...base];
      for (let m = rand(3) + 1; m > 0; m--) {
        const at = rand(chars.length);
        const op = rand(3);
        if (op === 0) chars.splice(at, 1);
        else if (op === 1) chars.splice(at, 0, alphabet[rand(alphabet.length)]);
        else chars[at] = alphabet[rand(alphabet.length)];
      }
      const text = chars.join('');
      expect(ours(text), text).toEqual(reference(text));
    }
  });
});

describe('decodeJson reports duplicate keys as Kubernetes words them, keeping the last value', () => {
  const cases: [string, string, unknown, string[]][] = [
    ['a top-level key', '{"kind":"A","kind":"B"}', { kind: 'B' }, ['duplicate field "kind"']],
    ['a nested key', '{"metadata":{"name":"a","name":"b"}}', { metadata: { name: 'b' } }, ['duplicate field "metadata.name"']],
    [
      'a key in a list item',
      '{"spec":{"validations":[{"expression":"a"},{"expression":"b","expression":"c"}]}}',
      { spec: { validations: [{ expression: 'a' }, { expression: 'c' }] } },
      ['duplicate field "spec.validations[1].expression"'],
    ],
    ['a key in a list inside a list', '{"a":[[{"x":1,"x":2}]]}', { a: [[{ x: 2 }]] }, ['duplicate field "a[0][0].x"']],
    ['a key in a top-level list', '[{"x":1,"x":2}]', [{ x: 2 }], ['duplicate field "[0].x"']],
    ['a duplicated object replaces the first wholesale', '{"m":{"a":1},"m":{"b":2}}', { m: { b: 2 } }, ['duplicate field "m"']],
    ['a key repeated three times, reported once', '{"a":1,"a":2,"a":3}', { a: 3 }, ['duplicate field "a"']],
    ['the same key in sibling objects is no duplicate', '{"x":{"a":1},"y":{"a":2}}', { x: { a: 1 }, y: { a: 2 } }, []],
    ['several, in document order', '{"b":1,"a":{"c":1,"c":2},"b":2}', { b: 2, a: { c: 2 } }, ['duplicate field "a.c"', 'duplicate field "b"']],
    ['a key with dots is written as it is', '{"x":{"a.b":1,"a.b":2}}', { x: { 'a.b': 2 } }, ['duplicate field "x.a.b"']],
  ];
  it.each(cases)('%s', (_name, text, value, duplicates) => {
    expect(decodeJson(text)).toEqual({ value, duplicates });
  });

  it('stops collecting at 100, as Kubernetes does', () => {
    const members = Array.from({ length: 150 }, (_, k) => `"k${k}":{"a":1,"a":2}`).join(',');
    const { duplicates } = decodeJson(`{${members}}`);
    expect(duplicates).toHaveLength(100);
    expect(duplicates[99]).toBe('duplicate field "k99.a"');
  });
});

describe('decodeJson words syntax errors as Go does, with the offset', () => {
  const cases: [string, string, string, number][] = [
    ['end of input', '{"a":', 'unexpected end of JSON input', 5],
    ['no value', '{"a":}', "invalid character '}' looking for beginning of value", 5],
    ['no key string', '{,}', "invalid character ',' looking for beginning of object key string", 1],
    ['after a key', '{"a" 1}', "invalid character '1' after object key", 5],
    ['after a member', '{"a":1 "b":2}', "invalid character '\"' after object key:value pair", 7],
    ['after an element', '[1 2]', "invalid character '2' after array element", 3],
    ['after the top-level value', '{}x', "invalid character 'x' after top-level value", 2],
    ['control character in a string', '"a\nb"', "invalid character '\\n' in string literal", 2],
    ['bad escape', '"\\q"', "invalid character 'q' in string escape code", 2],
    ['bad unicode escape', '"\\u00x0"', "invalid character 'x' in \\u hexadecimal character escape", 5],
    ['bad literal', 'nulL', "invalid character 'L' in literal null (expecting 'l')", 3],
    ['bad number', '-x', "invalid character 'x' in numeric literal", 1],
    ['quote shown escaped', "'", "invalid character '\\'' looking for beginning of value", 0],
  ];
  it.each(cases)('%s', (_name, text, reason, offset) => {
    const err = (() => {
      try {
        decodeJson(text);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(JsonSyntaxError);
    expect(err).toBeInstanceOf(SyntaxError);
    expect(err).toMatchObject({ reason, offset, message: `${reason} at offset ${offset}` });
  });
});

describe('decodeJson is safe on hostile input', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  it(`accepts nesting up to MAX_DEPTH (${MAX_DEPTH})`, () => {
    expect(() => decodeJson(nested(MAX_DEPTH))).not.toThrow();
  });
  it('rejects one level more with a clear error, counting empty containers too', () => {
    expect(() => decodeJson(nested(MAX_DEPTH + 1))).toThrow(`exceeded max depth of ${MAX_DEPTH}`);
    expect(() => decodeJson('{"a":'.repeat(MAX_DEPTH) + '{}' + '}'.repeat(MAX_DEPTH))).toThrow(JsonSyntaxError);
  });
  it('ends a million levels with the same error, not a stack overflow', () => {
    expect(() => decodeJson('['.repeat(1_000_000))).toThrow(`exceeded max depth of ${MAX_DEPTH} at offset ${MAX_DEPTH}`);
  });
  it('takes a lower bound from its caller', () => {
    expect(() => decodeJson('[[[]]]', 2)).toThrow('exceeded max depth of 2');
    expect(decodeJson('[[]]', 2).value).toEqual([[]]);
  });

  it('stores "__proto__" as an own data property and never swaps the prototype', () => {
    const { value, duplicates } = decodeJson('{"__proto__":{"polluted":true},"a":{"__proto__":null}}');
    const obj = value as Record<string, unknown>;
    expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
    expect(Object.keys(obj)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(obj, '__proto__')).toEqual({ value: { polluted: true }, writable: true, enumerable: true, configurable: true });
    expect((obj as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(obj.a)).toBe(Object.prototype);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(duplicates).toEqual([]);
    // The same shape JSON.parse builds.
    expect(JSON.stringify(obj)).toBe(JSON.stringify(JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":null}}')));
  });
  it('reports a duplicated "__proto__" like any other key', () => {
    expect(decodeJson('{"__proto__":1,"__proto__":2}')).toEqual({ value: JSON.parse('{"__proto__":2}'), duplicates: ['duplicate field "__proto__"'] });
  });
  it('treats keys named like Object.prototype members as ordinary, unduplicated keys', () => {
    expect(decodeJson('{"toString":1,"constructor":2,"hasOwnProperty":3}').duplicates).toEqual([]);
  });
});
