import { describe, expect, it } from 'vitest';
import { tokenize } from '../../src/cel/tokens.js';

const kinds = (src: string) => tokenize(src).map((t) => [t.kind, t.text]);

describe('the CEL lexer', () => {
  it('splits identifiers, numbers, strings and punctuation, with their offsets', () => {
    expect(kinds('a.b[0] + 1.5e3 == "x"')).toEqual([
      ['ident', 'a'],
      ['punct', '.'],
      ['ident', 'b'],
      ['punct', '['],
      ['number', '0'],
      ['punct', ']'],
      ['punct', '+'],
      ['number', '1.5e3'],
      ['punct', '='],
      ['punct', '='],
      ['string', '"x"'],
    ]);
    const [a, , s] = tokenize("ab + 'cd'");
    expect([a.start, a.end, s.start, s.end]).toEqual([0, 2, 5, 9]);
  });

  it('reads every quoting as one string token, and a string value without quotes or escapes', () => {
    const strings = tokenize(`'a\\'b' r"c\\d" b'e' '''f'g''' """h"""`);
    expect(strings.map((t) => t.kind)).toEqual(['string', 'string', 'string', 'string', 'string']);
    expect(strings.map((t) => t.value)).toEqual(["a'b", 'c\\d', 'e', "f'g", 'h']);
    expect(tokenize("'open").map((t) => [t.kind, t.value])).toEqual([['string', 'open']]);
  });

  it('skips comments and whitespace, and keeps an identifier of any length whole', () => {
    expect(kinds('x // y\n z')).toEqual([
      ['ident', 'x'],
      ['ident', 'z'],
    ]);
    const long = 'v'.repeat(300);
    expect(kinds(long)).toEqual([['ident', long]]);
  });
});
