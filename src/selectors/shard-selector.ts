/** What a shard range is computed from: the object's uid or namespace. */
interface Sharded {
  metadata: { uid?: string; namespace?: string };
}
import { SelectorError } from './label-selector.js';

/**
 * Shard selectors (Kubernetes 1.36, KEP-5866): `shardRange(<path>, '<start>', '<end>')` terms joined
 * by `||`. An object matches when the 64-bit FNV-1a hash of the field's value falls in one of the
 * ranges, start inclusive and end exclusive, over [0x0, 0x10000000000000000). Kubernetes parses it as
 * a CEL expression and walks the AST; this accepts the same expressions (either quote style,
 * whitespace, parentheses around terms) with the same checks and wording.
 */
export type ShardField = 'object.metadata.uid' | 'object.metadata.namespace';

export interface ShardRange {
  field: ShardField;
  /** Canonical: 0x-prefixed, 16 lowercase hex digits, or exactly 0x10000000000000000 (2^64) for an end. */
  start: string;
  end: string;
}

export interface ShardSelector {
  ranges: ShardRange[];
  /** The canonical form Kubernetes echoes back in a list's metadata.shardInfo.selector. */
  text: string;
  matches(obj: Sharded): boolean;
}

const FIELDS: readonly string[] = ['object.metadata.uid', 'object.metadata.namespace'];
const TOP = '0x10000000000000000';

/** 64-bit FNV-1a of the UTF-8 bytes of value, as 16 lowercase hex digits. Two 32-bit halves: no BigInt per byte. */
export function fnv1a64(value: string): string {
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (const b of Buffer.from(value, 'utf8')) {
    lo = (lo ^ b) >>> 0;
    // h * 0x100000001b3 = h * 0x1b3 + (h << 40), modulo 2^64.
    const loMul = lo * 0x1b3;
    const carry = Math.floor(loMul / 0x100000000);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = loMul >>> 0;
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/** Numeric order of canonical hex bounds: more digits is larger, else compare as text. */
const hexLess = (a: string, b: string): boolean => (a.length !== b.length ? a.length < b.length : a < b);

type Tok = { t: 'id'; v: string } | { t: 'str'; v: string } | { t: 'sym'; v: string } | { t: 'num'; v: string };

function tokenize(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'" || c === '"') {
      const end = s.indexOf(c, i + 1);
      if (end < 0) throw new SelectorError(`CEL parse error: Syntax error: token recognition error at: '${s.slice(i)}'`);
      const body = s.slice(i + 1, end);
      if (body.includes('\\')) throw new SelectorError(`CEL parse error: escape sequences are not supported in shard bounds: ${s.slice(i, end + 1)}`);
      out.push({ t: 'str', v: body });
      i = end + 1;
    } else if (s.startsWith('||', i)) {
      out.push({ t: 'sym', v: '||' });
      i += 2;
    } else if ('(),.'.includes(c)) {
      out.push({ t: 'sym', v: c });
      i++;
    } else if (/[0-9]/.test(c)) {
      // A number literal: valid CEL, but no shard bound.
      let j = i + 1;
      while (j < s.length && /[0-9A-Za-z.]/.test(s[j])) j++;
      out.push({ t: 'num', v: s.slice(i, j) });
      i = j;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < s.length && /[A-Za-z0-9_]/.test(s[j])) j++;
      out.push({ t: 'id', v: s.slice(i, j) });
      i = j;
    } else {
      throw new SelectorError(`CEL parse error: Syntax error: token recognition error at: '${c}'`);
    }
  }
  return out;
}

function checkHex(s: string, name: 'hexStart' | 'hexEnd'): string {
  if (!s.startsWith('0x')) throw new SelectorError(`${name} must have '0x' prefix, got ${JSON.stringify(s)}`);
  const hex = s.slice(2);
  if (hex === '') throw new SelectorError(`${name}: hex value is required after '0x'`);
  if (hex.length > 17) throw new SelectorError(`${name}: hex value too long (${hex.length} chars, max 17): ${JSON.stringify(hex)}`);
  for (const c of hex) {
    if (!/[0-9a-f]/.test(c)) throw new SelectorError(`${name}: invalid hex character ${JSON.stringify(c)} in ${JSON.stringify(s)}`);
  }
  if (hex.length === 17) {
    if (s !== TOP) throw new SelectorError(`${name}: 17-digit hex value must be '${TOP}' (2^64), got ${JSON.stringify(s)}`);
    return s;
  }
  // A shorter value is a number ('0x0' is the spec's own lower bound): padded to the canonical 16 digits.
  return '0x' + hex.padStart(16, '0');
}

class Parser {
  private p = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok | undefined {
    return this.toks[this.p];
  }

  private expectSym(v: string): void {
    const t = this.toks[this.p++];
    if (!t || t.t !== 'sym' || t.v !== v) throw new SelectorError(`CEL parse error: Syntax error: expected '${v}', found '${t ? t.v : '<EOF>'}'`);
  }

  /** expr := term ('||' term)* ; term := call | '(' expr ')' */
  expr(): ShardRange[] {
    const out = this.term();
    while (this.peek()?.t === 'sym' && this.peek()!.v === '||') {
      this.p++;
      out.push(...this.term());
    }
    return out;
  }

  private term(): ShardRange[] {
    const t = this.peek();
    if (t?.t === 'sym' && t.v === '(') {
      this.p++;
      const inner = this.expr();
      this.expectSym(')');
      return inner;
    }
    if (!t || t.t !== 'id') throw new SelectorError(`unexpected expression; expected shardRange() call or || operator`);
    this.p++;
    const next = this.peek();
    if (!(next?.t === 'sym' && next.v === '(')) throw new SelectorError(`unexpected expression kind; expected shardRange() call or || operator`);
    if (t.v !== 'shardRange') throw new SelectorError(`unsupported function ${JSON.stringify(t.v)}; only shardRange() and || are allowed`);
    this.p++;
    const args = this.args();
    if (args.length !== 3) throw new SelectorError(`shardRange() requires exactly 3 arguments, got ${args.length}`);
    const [path, start, end] = args;
    if (path.t !== 'path') throw new SelectorError('shardRange() first argument: expected field path (e.g. object.metadata.uid)');
    if (!FIELDS.includes(path.v)) throw new SelectorError(`unsupported field path ${JSON.stringify(path.v)}; supported: object.metadata.uid, object.metadata.namespace`);
    const lo = bound(start, 'hexStart');
    const hi = bound(end, 'hexEnd');
    if (!hexLess(lo, hi)) throw new SelectorError(`shard range start ${lo} must be less than end ${hi}`);
    return [{ field: path.v as ShardField, start: lo, end: hi }];
  }

  /** The arguments of a call: field paths (a.b.c) and string literals. */
  private args(): ({ t: 'path'; v: string } | { t: 'str'; v: string } | { t: 'other' })[] {
    const out: ({ t: 'path'; v: string } | { t: 'str'; v: string } | { t: 'other' })[] = [];
    if (this.peek()?.t === 'sym' && this.peek()!.v === ')') {
      this.p++;
      return out;
    }
    for (;;) {
      const t = this.toks[this.p++];
      if (!t) throw new SelectorError("CEL parse error: Syntax error: missing ')' at '<EOF>'");
      if (t.t === 'str') out.push(t);
      else if (t.t === 'id') {
        let v = t.v;
        while (this.peek()?.t === 'sym' && this.peek()!.v === '.') {
          this.p++;
          const n = this.toks[this.p++];
          if (!n || n.t !== 'id') throw new SelectorError("CEL parse error: Syntax error: expected a field name after '.'");
          v += '.' + n.v;
        }
        out.push({ t: 'path', v });
      } else out.push({ t: 'other' });
      const sep = this.toks[this.p++];
      if (sep?.t === 'sym' && sep.v === ')') return out;
      if (!(sep?.t === 'sym' && sep.v === ',')) throw new SelectorError(`CEL parse error: Syntax error: expected ',' or ')', found '${sep ? sep.v : '<EOF>'}'`);
    }
  }

  done(): void {
    const t = this.peek();
    if (t) throw new SelectorError(`CEL parse error: Syntax error: extraneous input '${t.v}'`);
  }
}

function bound(arg: { t: string; v?: string }, name: 'hexStart' | 'hexEnd'): string {
  if (arg.t !== 'str') throw new SelectorError(`${name} must be a string literal (e.g. '0xff')`);
  return checkHex(arg.v!, name);
}

function valueOf(obj: Sharded, field: ShardField): string {
  return (field === 'object.metadata.uid' ? obj.metadata.uid : obj.metadata.namespace) ?? '';
}

/** Parses a shardSelector; SelectorError (with Kubernetes' wording) when it is malformed. */
export function parseShardSelector(text: string): ShardSelector {
  const expr = text.trim();
  if (expr === '') throw new SelectorError('empty shard selector is not allowed; omit the parameter for unfiltered lists');
  const parser = new Parser(tokenize(expr));
  const ranges = parser.expr();
  parser.done();
  for (const r of ranges.slice(1)) {
    if (r.field !== ranges[0].field) throw new SelectorError(`all shard ranges must use the same field, got ${JSON.stringify(ranges[0].field)} and ${JSON.stringify(r.field)}`);
  }
  const field = ranges[0].field;
  return {
    ranges,
    text: ranges.map((r) => `shardRange(${r.field}, '${r.start}', '${r.end}')`).join(' || '),
    matches(obj) {
      const h = '0x' + fnv1a64(valueOf(obj, field));
      return ranges.some((r) => !hexLess(h, r.start) && hexLess(h, r.end));
    },
  };
}
