/** Small helpers the library files share: CEL errors, CEL equality and ordering of plain values. */
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { EvaluationError, Optional } from '@marcbachmann/cel-js';

/** The error a library function throws; the library attaches the call's position to it. */
export function celError(message: string, code = 'evaluation_error'): Error {
  return new EvaluationError({ code, message });
}

export const sync = { async: false } as const;

/** The numeric value of an int, uint or double, or undefined for other values. */
function numeric(v: unknown): number | bigint | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v instanceof UnsignedInt) return v.valueOf();
  return undefined;
}

/** CEL equality: numbers compare across int/uint/double, lists and maps element-wise. */
export function celEquals(a: unknown, b: unknown): boolean {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) {
    if (na === undefined || nb === undefined) return false;

    return na == nb;
  }
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => celEquals(x, b[i]));
  }
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof Duration && b instanceof Duration) return a.seconds === b.seconds && a.nanos === b.nanos;
  if (a instanceof Optional && b instanceof Optional) return a.hasValue() === b.hasValue() && (!a.hasValue() || celEquals(a.value(), b.value()));
  const eq = (a as { celEquals?: (o: unknown) => boolean }).celEquals;
  if (typeof eq === 'function') return eq.call(a, b);
  const ea = mapEntries(a);
  const eb = mapEntries(b);
  if (!ea || !eb || ea.length !== eb.length) return false;
  const bm = new Map(eb);
  return ea.every(([k, v]) => bm.has(k) && celEquals(v, bm.get(k)));
}

function mapEntries(v: object): [unknown, unknown][] | undefined {
  if (v instanceof Map) return [...v.entries()];
  const proto = Object.getPrototypeOf(v);
  if (proto === null || proto === Object.prototype) return Object.entries(v);
  return undefined;
}

/** Ordering of comparable CEL values (numbers, strings, bools, timestamps, durations, bytes). */
export function celCompare(a: unknown, b: unknown): number {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return na < nb ? -1 : na > nb ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return Math.sign(a.getTime() - b.getTime());
  if (a instanceof Duration && b instanceof Duration) return Math.sign(a.valueOf() - b.valueOf());
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  throw celError(`no such overload: cannot compare ${typeName(a)} with ${typeName(b)}`, 'no_such_overload');
}

export function typeName(v: unknown): string {
  if (v === null) return 'null_type';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string' || typeof v === 'boolean') return typeof v === 'string' ? 'string' : 'bool';
  if (v instanceof UnsignedInt) return 'uint';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (v instanceof Duration) return 'google.protobuf.Duration';
  return 'map';
}

/** A CEL string is a sequence of code points; JS strings index UTF-16 units. */
export function codePoints(s: string): string[] {
  return Array.from(s);
}
