import { isLabelValue, isQualifiedName } from '../api/name-formats.js';

/**
 * Kubernetes label selectors (labels.Parse): `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
 * `a`, `!a`, and the integer comparisons `a>3`, `a<3`, joined by commas (AND). Parsed once per
 * request into requirements sorted by key, as Kubernetes normalizes them; matching is a loop.
 *
 * The grammar follows Kubernetes' lexer and parser, including its corners: `in`/`notin` are
 * identifiers where a value is expected (`a in (in)`), `x in ()` is the set holding the empty
 * value, `a=` selects the empty value, and errors read as Kubernetes words them.
 */
export type Operator = 'in' | 'notin' | 'exists' | '!' | '=' | '!=' | 'gt' | 'lt';

export interface Requirement {
  key: string;
  op: Operator;
  /** Sorted and unique (Kubernetes keeps them as a set). */
  values: string[];
}

export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

type Tok = 'id' | 'eos' | 'error' | ')' | ',' | '!' | '==' | '=' | '>' | '<' | '!=' | '(' | 'in' | 'notin';
interface Item {
  tok: Tok;
  lit: string;
}

const SYMBOLS: ReadonlySet<string> = new Set([')', ',', '!', '==', '=', '>', '<', '!=', '(']);
const isWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string): boolean => '=!(),><'.includes(c);

function lex(s: string): Item[] {
  const out: Item[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isWhitespace(s[i])) i++;
    if (i >= s.length) {
      out.push({ tok: 'eos', lit: '' });
      return out;
    }
    if (isSpecial(s[i])) {
      // The longest run of symbols that is still an operator (`!=`, `==`), as Kubernetes scans it.
      let buf = '';
      let last: Item | undefined;
      while (i < s.length && isSpecial(s[i])) {
        buf += s[i];
        if (SYMBOLS.has(buf)) last = { tok: buf as Tok, lit: buf };
        else if (last) break;
        i++;
      }
      out.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buf}'` });
      if (!last) {
        out.push({ tok: 'eos', lit: '' });
        return out;
      }
      continue;
    }
    let j = i;
    while (j < s.length && !isSpecial(s[j]) && !isWhitespace(s[j])) j++;
    const word = s.slice(i, j);
    out.push({ tok: word === 'in' || word === 'notin' ? word : 'id', lit: word });
    i = j;
  }
}

const fieldInvalid = (path: string, value: string, msgs: string[]): string => `${path}: Invalid value: ${JSON.stringify(value)}: ${msgs.join('; ')}`;

class Parser {
  private pos = 0;
  constructor(private readonly items: Item[]) {}

  /** Where a value is expected, `in` and `notin` are plain identifiers. */
  private peek(values = true): Item {
    const it = this.items[Math.min(this.pos, this.items.length - 1)];
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id', lit: it.lit } : it;
  }

  private next(values = true): Item {
    const it = this.peek(values);
    this.pos++;
    return it;
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const t = this.peek();
      if (t.tok === 'eos') return reqs;
      if (t.tok !== 'id' && t.tok !== '!') throw new SelectorError(`found '${t.lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.requirement());
      } catch (err) {
        if (err instanceof SelectorError) throw new SelectorError(`unable to parse requirement: ${err.message}`);
        throw err;
      }
      const sep = this.next();
      if (sep.tok === 'eos') return reqs;
      if (sep.tok !== ',') throw new SelectorError(`found '${sep.lit}', expected: ',' or 'end of string'`);
      const after = this.peek();
      if (after.tok !== 'id' && after.tok !== '!') throw new SelectorError(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  private requirement(): Requirement {
    let t = this.next();
    let op: Operator | undefined;
    if (t.tok === '!') {
      op = '!';
      t = this.next();
    }
    if (t.tok !== 'id') throw new SelectorError(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrors = isQualifiedName(key);
    if (keyErrors.length > 0) throw new SelectorError(fieldInvalid('', key, keyErrors).slice(2));
    const la = this.peek().tok;
    if (la === 'eos' || la === ',') return newRequirement(key, op ?? 'exists', []);
    if (op === '!') return newRequirement(key, '!', []);
    const o = this.next(false);
    switch (o.tok) {
      case 'in':
      case 'notin':
        return newRequirement(key, o.tok, this.setValues());
      case '=':
      case '==':
        return newRequirement(key, '=', this.exactValue());
      case '!=':
        return newRequirement(key, '!=', this.exactValue());
      case '>':
        return newRequirement(key, 'gt', this.exactValue());
      case '<':
        return newRequirement(key, 'lt', this.exactValue());
      default:
        throw new SelectorError(`found '${o.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  private exactValue(): string[] {
    const la = this.peek();
    if (la.tok === 'eos' || la.tok === ',') return [''];
    const t = this.next();
    if (t.tok === 'id') return [t.lit];
    throw new SelectorError(`found '${t.lit}', expected: identifier`);
  }

  private setValues(): string[] {
    const open = this.next();
    if (open.tok !== '(') throw new SelectorError(`found '${open.lit}' expected: '('`);
    const la = this.peek();
    if (la.tok === ')') {
      this.next();
      return [''];
    }
    if (la.tok !== 'id' && la.tok !== ',') throw new SelectorError(`found '${la.lit}', expected: ',', ')' or identifier`);
    const values = new Set<string>();
    for (;;) {
      const t = this.next();
      if (t.tok === 'id') {
        values.add(t.lit);
        const after = this.peek();
        if (after.tok === ',') continue;
        if (after.tok === ')') break;
        throw new SelectorError(`found '${after.lit}', expected: ',' or ')'`);
      } else if (t.tok === ',') {
        // `(,x)`, `(x,,y)` and `(x,)` hold the empty value too.
        if (values.size === 0) values.add('');
        const after = this.peek();
        if (after.tok === ')') {
          values.add('');
          break;
        }
        if (after.tok === ',') values.add('');
      } else {
        throw new SelectorError(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
    const close = this.next();
    if (close.tok !== ')') throw new SelectorError(`found '${la.lit}', expected: ')'`);
    return [...values];
  }
}

/** Kubernetes' NewRequirement checks: every error found, one message (aggregated as Go does). */
function newRequirement(key: string, op: Operator, values: string[]): Requirement {
  const sorted = [...new Set(values)].sort();
  const errs: string[] = [];
  if ((op === 'gt' || op === 'lt') && !/^[+-]?[0-9]+$/.test(sorted[0] ?? '')) {
    errs.push(fieldInvalid('values[0]', sorted[0] ?? '', ["for 'Gt', 'Lt' operators, the value must be an integer"]));
  }
  sorted.forEach((v, i) => {
    const bad = isLabelValue(v);
    if (bad.length > 0) errs.push(fieldInvalid(`values[${i}][${key}]`, v, bad));
  });
  if (errs.length === 1) throw new SelectorError(errs[0]);
  if (errs.length > 1) throw new SelectorError(`[${errs.join(', ')}]`);
  return { key, op, values: sorted };
}

export function parseLabelSelector(text: string): Requirement[] {
  const reqs = new Parser(lex(text)).parse();
  // Sorted by key (stable), as Kubernetes normalizes: the same selector written two ways is one.
  return reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The selector written back in Kubernetes' canonical form (sorted terms, sorted set values). */
export function formatLabelSelector(reqs: readonly Requirement[]): string {
  return reqs
    .map((r) => {
      switch (r.op) {
        case 'exists':
          return r.key;
        case '!':
          return `!${r.key}`;
        case 'in':
        case 'notin':
          return `${r.key} ${r.op} (${r.values.join(',')})`;
        case 'gt':
          return `${r.key}>${r.values[0]}`;
        case 'lt':
          return `${r.key}<${r.values[0]}`;
        default:
          return `${r.key}${r.op}${r.values[0]}`;
      }
    })
    .join(',');
}

const INT64 = /^[+-]?[0-9]+$/;

export function matchesLabels(reqs: readonly Requirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  for (const r of reqs) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = has ? labels![r.key] : undefined;
    switch (r.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case '=':
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case '!=':
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'gt':
      case 'lt': {
        // Label values are at most 63 characters of [A-Za-z0-9_.-]: BigInt keeps int64 exact.
        if (!has || !INT64.test(v!)) return false;
        const have = BigInt(v!);
        const want = BigInt(r.values[0]);
        if (r.op === 'gt' ? !(have > want) : !(have < want)) return false;
        break;
      }
    }
  }
  return true;
}

/**
 * The terms a label index can answer: equality and `in` select only objects holding one of the
 * listed values for the key, so the index's keys for those values are a superset of the matches.
 */
export function indexableTerms(reqs: readonly Requirement[]): { key: string; values: string[] }[] {
  return reqs.filter((r) => r.op === '=' || r.op === 'in').map((r) => ({ key: r.key, values: r.values }));
}
