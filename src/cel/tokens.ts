/**
 * A small CEL lexer for the text-level passes that run before (or instead of) parsing: the
 * struct-literal rewrite (struct-literals.ts) and finding which `variables.<name>` an expression
 * mentions (variable-references.ts). It knows what those passes must not misread: string literals
 * of every quoting (raw, bytes, triple-quoted) and `//` comments. It imports nothing, so any room
 * that reads CEL text can use it.
 */

export interface Token {
  kind: 'ident' | 'string' | 'number' | 'punct';
  /** The source text of the token, quotes and prefix included for a string. */
  text: string;
  /** For a string: its contents with the quotes removed and each escape read as the character after it. */
  value?: string;
  start: number;
  end: number;
}

const STRING_START = /([rRbB]{0,2})('''|"""|'|")/y;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /\d[\w.]*/y;

/** The token matched by a sticky pattern at i, or undefined. */
function matchAt(re: RegExp, src: string, i: number): RegExpExecArray | null {
  re.lastIndex = i;
  return re.exec(src);
}

/** A string literal whose quote ends at `from`: its end offset and contents (an unterminated one runs to the end). */
function readString(src: string, from: number, raw: boolean, quote: string): { value: string; end: number } {
  let value = '';
  let i = from;
  while (i < src.length) {
    if (src.startsWith(quote, i)) return { value, end: i + quote.length };
    if (!raw && src[i] === '\\' && i + 1 < src.length) {
      value += src[i + 1];
      i += 2;
      continue;
    }
    value += src[i++];
  }
  return { value, end: src.length };
}

export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    const lit = matchAt(STRING_START, src, i);
    if (lit) {
      const s = readString(src, i + lit[0].length, /[rR]/.test(lit[1]), lit[2]);
      out.push({ kind: 'string', text: src.slice(i, s.end), value: s.value, start: i, end: s.end });
      i = s.end;
      continue;
    }
    const word = matchAt(IDENT, src, i) ?? matchAt(NUMBER, src, i);
    if (word) {
      const end = i + word[0].length;
      out.push({ kind: /\d/.test(c) ? 'number' : 'ident', text: word[0], start: i, end });
      i = end;
      continue;
    }
    out.push({ kind: 'punct', text: c, start: i, end: i + 1 });
    i++;
  }
  return out;
}
