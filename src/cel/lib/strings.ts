/**
 * The string extensions @marcbachmann/cel-js lacks (cel-go ext.Strings, which Kubernetes enables):
 * charAt, replace, reverse, format and strings.quote. Indexes count code points, as CEL's do.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { celError, codePoints, sync, typeName } from './common.js';

class StringsNamespace {}

export function registerStrings(env: Environment): void {
  env.registerFunction('string.charAt(int): string', charAt, sync);
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => replace(s, a, b, -1n), sync);
  env.registerFunction('string.replace(string, string, int): string', replace, sync);
  env.registerFunction('string.reverse(): string', (s: string) => codePoints(s).reverse().join(''), sync);
  env.registerFunction('string.format(list): string', formatString, sync);
  env.registerType('StringsNamespace', StringsNamespace);
  env.registerConstant('strings', 'StringsNamespace', new StringsNamespace());
  env.registerFunction('StringsNamespace.quote(string): string', (_: unknown, s: string) => quote(s), sync);
}

function charAt(s: string, i: bigint): string {
  const cps = codePoints(s);
  if (i < 0n || i > BigInt(cps.length)) throw celError(`index out of range: ${i}`, 'index_out_of_range');
  return cps[Number(i)] ?? '';
}

function replace(s: string, from: string, to: string, n: bigint): string {
  if (n === 0n) return s;
  if (n < 0n)
    return from === ''
      ? codePoints(s)
          .map((c) => to + c)
          .join('') + to
      : s.split(from).join(to);
  let out = '';
  let rest = s;
  let left = n;
  while (left > 0n) {
    if (from === '') {
      const [c, ...tail] = codePoints(rest);
      out += to + (c ?? '');
      rest = tail.join('');
      left--;
      if (c === undefined) return out;
      continue;
    }
    const at = rest.indexOf(from);
    if (at < 0) break;
    out += rest.slice(0, at) + to;
    rest = rest.slice(at + from.length);
    left--;
  }
  return out + rest;
}

/** strings.quote: a double-quoted CEL string literal with escapes. */
export function quote(s: string): string {
  let out = '"';
  for (const c of s) {
    switch (c) {
      case '\x07':
        out += '\\a';
        break;
      case '\b':
        out += '\\b';
        break;
      case '\f':
        out += '\\f';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      case '\v':
        out += '\\v';
        break;
      case '\\':
        out += '\\\\';
        break;
      case '"':
        out += '\\"';
        break;
      default: {
        const cp = c.codePointAt(0)!;
        out += cp >= 0xd800 && cp <= 0xdfff ? '\ufffd' : c;
      }
    }
  }
  return out + '"';
}

/** string.format(list): %s %d %f %e %b %o %x %X %%, with an optional precision (%.3f). */
function formatString(fmt: string, args: unknown[]): string {
  let out = '';
  let argIndex = 0;
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    if (fmt[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    let j = i + 1;
    let precision: number | undefined;
    if (fmt[j] === '.') {
      let digits = '';
      j++;
      while (j < fmt.length && fmt[j] >= '0' && fmt[j] <= '9') digits += fmt[j++];
      precision = digits === '' ? 0 : Number(digits);
    }
    const verb = fmt[j];
    if (verb === undefined) throw celError('could not parse formatting clause: unrecognized formatting clause ""');
    if (argIndex >= args.length) throw celError(`index ${argIndex} out of range`, 'index_out_of_range');
    out += formatClause(verb, precision, args[argIndex++]);
    i = j;
  }
  return out;
}

function formatClause(verb: string, precision: number | undefined, v: unknown): string {
  switch (verb) {
    case 's':
      return formatAsString(v);
    case 'd':
      if (typeof v === 'bigint' || v instanceof UnsignedInt) return String(v.valueOf());
      if (typeof v === 'number' && !Number.isFinite(v)) return formatDouble(v, 0);
      throw celError(`error during formatting: decimal clause can only be used on integers, was given ${typeName(v)}`);
    case 'f':
    case 'e': {
      const n = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : v instanceof UnsignedInt ? Number(v.valueOf()) : undefined;
      if (n === undefined) throw celError(`error during formatting: fixed-point clause can only be used on doubles, was given ${typeName(v)}`);
      return verb === 'f' ? formatDouble(n, precision ?? 6) : formatExp(n, precision ?? 6);
    }
    case 'b':
    case 'o':
    case 'x':
    case 'X': {
      const radix = verb === 'b' ? 2 : verb === 'o' ? 8 : 16;
      let s: string;
      if (typeof v === 'bigint' || v instanceof UnsignedInt) {
        const n = v.valueOf() as bigint;
        s = (n < 0n ? '-' : '') + (n < 0n ? -n : n).toString(radix);
      } else if (typeof v === 'boolean' && verb === 'b') s = v ? '1' : '0';
      else if (radix === 16 && (typeof v === 'string' || v instanceof Uint8Array)) s = Buffer.from(v as string).toString('hex');
      else throw celError(`error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given ${typeName(v)}`);
      return verb === 'X' ? s.toUpperCase() : s;
    }
    default:
      throw celError(`could not parse formatting clause: unrecognized formatting clause "${verb}"`);
  }
}

function formatDouble(n: number, precision: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  return n.toFixed(precision);
}

function formatExp(n: number, precision: number): string {
  if (!Number.isFinite(n)) return formatDouble(n, 0);
  const [m, e] = n.toExponential(precision).split('e');
  const exp = Number(e);
  return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** %s: strings as they are, other values as CEL's string() would print them. */
export function formatAsString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null) return 'null';
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (v instanceof UnsignedInt) return String(v.valueOf());
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
    return String(v);
  }
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  // RFC 3339 with the fraction's trailing zeros dropped, as Go's time.RFC3339Nano writes it.
  if (v instanceof Date) return v.toISOString().replace(/\.(\d*?)0*Z$/, (_m, digits: string) => (digits ? `.${digits}Z` : 'Z'));
  if (v instanceof Duration) return v.toString();
  if (Array.isArray(v)) return `[${v.map(formatAsString).join(', ')}]`;
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v);
    if (v instanceof Map || proto === null || proto === Object.prototype) {
      const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
      return `{${entries.map(([k, x]) => `${formatAsString(k)}: ${formatAsString(x)}`).join(', ')}}`;
    }
    return String(v);
  }
  return String(v);
}
