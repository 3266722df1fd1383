/**
 * Kubernetes' list library (isSorted, sum, min, max, indexOf, lastIndexOf) and the cel-go list
 * extensions Kubernetes enables (slice, flatten, distinct, reverse, sort, lists.range), plus the
 * sets library (sets.contains, sets.equivalent, sets.intersects).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { celCompare, celEquals, celError, sync } from './common.js';

class ListsNamespace {}
class SetsNamespace {}

export function registerLists(env: Environment): void {
  env.registerFunction('list<A>.isSorted(): bool', (l: unknown[]) => l.every((v, i) => i === 0 || celCompare(l[i - 1], v) <= 0), sync);
  env.registerFunction('list<int>.sum(): int', (l: bigint[]) => checkedIntSum(l), sync);
  env.registerFunction('list<uint>.sum(): uint', (l: UnsignedInt[]) => new UnsignedInt(l.reduce((a, b) => a + b.valueOf(), 0n)), sync);
  env.registerFunction('list<double>.sum(): double', (l: number[]) => l.reduce((a, b) => a + b, 0), sync);
  env.registerFunction('list<google.protobuf.Duration>.sum(): google.protobuf.Duration', (l: Duration[]) => l.reduce((a, b) => a.addDuration(b), new Duration(0)), sync);
  env.registerFunction('list<A>.min(): A', (l: unknown[]) => extreme(l, -1, 'min'), sync);
  env.registerFunction('list<A>.max(): A', (l: unknown[]) => extreme(l, 1, 'max'), sync);
  env.registerFunction('list<A>.indexOf(A): int', (l: unknown[], v: unknown) => BigInt(l.findIndex((x) => celEquals(x, v))), sync);
  env.registerFunction(
    'list<A>.lastIndexOf(A): int',
    (l: unknown[], v: unknown) => {
      for (let i = l.length - 1; i >= 0; i--) if (celEquals(l[i], v)) return BigInt(i);
      return -1n;
    },
    sync,
  );

  env.registerFunction('list<A>.slice(int, int): list<A>', slice, sync);
  env.registerFunction('list<A>.reverse(): list<A>', (l: unknown[]) => [...l].reverse(), sync);
  env.registerFunction('list<A>.distinct(): list<A>', (l: unknown[]) => l.filter((v, i) => l.findIndex((x) => celEquals(x, v)) === i), sync);
  env.registerFunction('list<A>.sort(): list<A>', (l: unknown[]) => [...l].sort(celCompare), sync);
  env.registerFunction('list.flatten(): list', (l: unknown[]) => flatten(l, 1n), sync);
  env.registerFunction('list.flatten(int): list', flatten, sync);
  env.registerType('ListsNamespace', ListsNamespace);
  env.registerConstant('lists', 'ListsNamespace', new ListsNamespace());
  env.registerFunction(
    'ListsNamespace.range(int): list<int>',
    (_: unknown, n: bigint) => {
      if (n > 1_000_000n) throw celError('lists.range: size too large');
      return Array.from({ length: Number(n < 0n ? 0n : n) }, (_v, i) => BigInt(i));
    },
    sync,
  );

  env.registerType('SetsNamespace', SetsNamespace);
  env.registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  const has = (l: unknown[], v: unknown) => l.some((x) => celEquals(x, v));
  env.registerFunction('SetsNamespace.contains(list, list): bool', (_: unknown, a: unknown[], b: unknown[]) => b.every((v) => has(a, v)), sync);
  env.registerFunction('SetsNamespace.equivalent(list, list): bool', (_: unknown, a: unknown[], b: unknown[]) => b.every((v) => has(a, v)) && a.every((v) => has(b, v)), sync);
  env.registerFunction('SetsNamespace.intersects(list, list): bool', (_: unknown, a: unknown[], b: unknown[]) => b.some((v) => has(a, v)), sync);
}

const MAX_INT = 9223372036854775807n;
const MIN_INT = -9223372036854775808n;

function checkedIntSum(l: bigint[]): bigint {
  let s = 0n;
  for (const v of l) {
    s += v;
    if (s > MAX_INT || s < MIN_INT) throw celError('integer overflow', 'numeric_overflow');
  }
  return s;
}

function extreme(l: unknown[], sign: 1 | -1, name: string): unknown {
  if (l.length === 0) throw celError(`${name} called on empty list`);
  let best = l[0];
  for (let i = 1; i < l.length; i++) if (celCompare(l[i], best) * sign > 0) best = l[i];
  return best;
}

function slice(l: unknown[], start: bigint, end: bigint): unknown[] {
  if (start < 0n || end < 0n) throw celError(`cannot slice(${start}, ${end}), negative indexes not supported`);
  if (start > end) throw celError(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
  if (end > BigInt(l.length)) throw celError(`cannot slice(${start}, ${end}), list is length ${l.length}`);
  return l.slice(Number(start), Number(end));
}

function flatten(l: unknown[], depth: bigint): unknown[] {
  if (depth < 0n) throw celError('level must be non-negative');
  const out: unknown[] = [];
  for (const v of l) {
    if (Array.isArray(v) && depth > 0n) out.push(...flatten(v, depth - 1n));
    else out.push(v);
  }
  return out;
}
