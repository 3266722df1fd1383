/**
 * Which `variables.<name>` a CEL expression mentions, found by a small lexer (string literals and
 * comments skipped, `x.variables.y` field selections ignored). It stands in for the compile-time
 * check Kubernetes gets from composing variables in order, until the CEL room compiles them.
 */

type Token = { kind: 'ident' | 'string' | 'punct'; text: string; at: number };

const literalStart = /^([rRbB]{0,2})('''|"""|'|")/;

function readString(src: string, start: number, raw: boolean, quote: string): { value: string; end: number } {
  let i = start;
  let value = '';
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

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else {
      const lit = literalStart.exec(src.slice(i, i + 5));
      if (lit) {
        const s = readString(src, i + lit[0].length, /[rR]/.test(lit[1]), lit[2]);
        out.push({ kind: 'string', text: s.value, at: i });
        i = s.end;
      } else if (/[_a-zA-Z]/.test(c)) {
        let j = i + 1;
        while (j < src.length && /[_a-zA-Z0-9]/.test(src[j])) j++;
        out.push({ kind: 'ident', text: src.slice(i, j), at: i });
        i = j;
      } else {
        out.push({ kind: 'punct', text: c, at: i });
        i++;
      }
    }
  }
  return out;
}

/** The `variables` identifiers of an expression (not `x.variables` field selections). */
function variablesTokens(t: Token[]): number[] {
  return t.flatMap((tok, i) => (tok.kind === 'ident' && tok.text === 'variables' && t[i - 1]?.text !== '.' ? [i] : []));
}

/** Where an expression first mentions the `variables` identifier, or undefined. */
export function variablesOffset(expression: string): number | undefined {
  const t = tokenize(expression);
  const first = variablesTokens(t)[0];
  return first === undefined ? undefined : t[first].at;
}

/** Names read as `variables.name` or `variables['name']`, in order of first mention. */
export function referencedVariables(expression: string): string[] {
  const t = tokenize(expression);
  const names: string[] = [];
  for (const i of variablesTokens(t)) {
    const next = t[i + 1];
    let name: string | undefined;
    if (next?.text === '.' && t[i + 2]?.kind === 'ident') name = t[i + 2].text;
    else if (next?.text === '[' && t[i + 2]?.kind === 'string' && t[i + 3]?.text === ']') name = t[i + 2].text;
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}
