/**
 * Kubernetes' quantity library: quantity(), isQuantity(), comparisons, add/sub, sign, isInteger,
 * asInteger, asApproximateFloat. A quantity is held exactly as mantissa × 10^exponent (binary
 * suffixes are exact integers, folded into the mantissa).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celError, sync } from './common.js';

const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const MAX_INT = 9223372036854775807n;
const MIN_INT = -9223372036854775808n;

export class Quantity {
  constructor(
    readonly mantissa: bigint,
    readonly exponent: number,
    readonly text: string,
  ) {}
  toJSON(): string {
    return this.text;
  }
  toString(): string {
    return this.text;
  }
  compare(o: Quantity): number {
    const e = Math.min(this.exponent, o.exponent);
    const a = this.mantissa * 10n ** BigInt(this.exponent - e);
    const b = o.mantissa * 10n ** BigInt(o.exponent - e);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  celEquals(o: unknown): boolean {
    return o instanceof Quantity && this.compare(o) === 0;
  }
  plus(o: Quantity, sign: 1n | -1n): Quantity {
    const e = Math.min(this.exponent, o.exponent);
    const m = this.mantissa * 10n ** BigInt(this.exponent - e) + sign * o.mantissa * 10n ** BigInt(o.exponent - e);
    return new Quantity(m, e, formatQuantity(m, e));
  }
  /** The integer value, or undefined when it has a fraction. */
  integer(): bigint | undefined {
    if (this.exponent >= 0) return this.mantissa * 10n ** BigInt(this.exponent);
    const d = 10n ** BigInt(-this.exponent);
    return this.mantissa % d === 0n ? this.mantissa / d : undefined;
  }
}

function formatQuantity(m: bigint, e: number): string {
  if (m === 0n) return '0';
  let mm = m;
  let ee = e;
  while (mm % 10n === 0n) {
    mm /= 10n;
    ee++;
  }
  // The largest decimal suffix whose exponent fits, as Kubernetes' canonical decimal form.
  for (const [suffix, exp] of Object.entries(DECIMAL).sort((a, b) => b[1] - a[1])) {
    if (ee >= exp) return `${mm * 10n ** BigInt(ee - exp)}${suffix}`;
  }
  return `${mm}e${ee}`;
}

/** The quantity, or undefined when the text is not one. */
export function parseQuantity(s: string): Quantity | undefined {
  const m = /^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/.exec(s);
  if (!m) return undefined;
  const [, sign, num, suffix = ''] = m;
  const [int, frac = ''] = num.split('.');
  let mantissa = BigInt((int || '0') + frac) * (sign === '-' ? -1n : 1n);
  let exponent = -frac.length;
  if (suffix in BINARY) mantissa *= BINARY[suffix];
  else if (suffix in DECIMAL) exponent += DECIMAL[suffix];
  else {
    const x = Number(suffix.slice(1));
    if (!Number.isSafeInteger(x) || Math.abs(x) > 1000) return undefined;
    exponent += x;
  }
  return new Quantity(mantissa, exponent, s);
}

export function registerQuantity(env: Environment): void {
  const of = (s: string): Quantity => {
    const q = parseQuantity(s);
    if (!q) throw celError(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
    return q;
  };
  const T = 'kubernetes.Quantity';
  const fromInt = (i: bigint) => new Quantity(i, 0, String(i));
  env.registerType(T, Quantity);
  env.registerFunction(`quantity(string): ${T}`, of, sync);
  env.registerFunction('isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined, sync);
  env.registerFunction(`${T}.sign(): int`, (q: Quantity) => BigInt(Math.sign(q.compare(fromInt(0n)))), sync);
  env.registerFunction(
    `${T}.isInteger(): bool`,
    (q: Quantity) => {
      const i = q.integer();
      return i !== undefined && i <= MAX_INT && i >= MIN_INT;
    },
    sync,
  );
  env.registerFunction(
    `${T}.asInteger(): int`,
    (q: Quantity) => {
      const i = q.integer();
      if (i === undefined || i > MAX_INT || i < MIN_INT) throw celError('cannot convert value to integer');
      return i;
    },
    sync,
  );
  env.registerFunction(`${T}.asApproximateFloat(): double`, (q: Quantity) => Number(q.mantissa) * 10 ** q.exponent, sync);
  env.registerFunction(`${T}.compareTo(${T}): int`, (a: Quantity, b: Quantity) => BigInt(a.compare(b)), sync);
  env.registerFunction(`${T}.isLessThan(${T}): bool`, (a: Quantity, b: Quantity) => a.compare(b) < 0, sync);
  env.registerFunction(`${T}.isGreaterThan(${T}): bool`, (a: Quantity, b: Quantity) => a.compare(b) > 0, sync);
  env.registerFunction(`${T}.add(${T}): ${T}`, (a: Quantity, b: Quantity) => a.plus(b, 1n), sync);
  env.registerFunction(`${T}.add(int): ${T}`, (a: Quantity, b: bigint) => a.plus(fromInt(b), 1n), sync);
  env.registerFunction(`${T}.sub(${T}): ${T}`, (a: Quantity, b: Quantity) => a.plus(b, -1n), sync);
  env.registerFunction(`${T}.sub(int): ${T}`, (a: Quantity, b: bigint) => a.plus(fromInt(b), -1n), sync);
  env.registerOperator(`${T} == ${T}`, (a: Quantity, b: Quantity) => a.celEquals(b));
}
