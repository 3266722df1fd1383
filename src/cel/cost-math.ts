/**
 * cel-go's cost arithmetic (checker/cost.go): ranges of unsigned 64-bit counts that saturate
 * instead of overflowing. Doubles stand in for uint64: 2^64 plays math.MaxUint64 (Go's own
 * float64(math.MaxUint64) is 2^64 too), and every count past 2^53 is far over any limit, so the
 * precision lost there never changes an answer.
 */
export const MAX_U64 = 2 ** 64;

/** A size (characters, bytes, items or entries) or a cost, from min to max. */
export interface Range {
  readonly min: number;
  readonly max: number;
}

export const fixed = (n: number): Range => ({ min: n, max: n });
export const UNKNOWN: Range = { min: 0, max: MAX_U64 };
export const ZERO: Range = fixed(0);

const saturate = (x: number): number => (x >= MAX_U64 ? MAX_U64 : x);

function mulU(x: number, y: number): number {
  return x === 0 || y === 0 ? 0 : saturate(x * y);
}

/** multiplyByCostFactor: x × factor, rounded up. */
function factorU(x: number, f: number): number {
  if (x > 0 && f > 0 && x > MAX_U64 / f) return MAX_U64;
  return saturate(Math.ceil(x * f));
}

export const add = (a: Range, b: Range): Range => ({ min: saturate(a.min + b.min), max: saturate(a.max + b.max) });
export const mul = (a: Range, b: Range): Range => ({ min: mulU(a.min, b.min), max: mulU(a.max, b.max) });
export const byFactor = (a: Range, f: number): Range => ({ min: factorU(a.min, f), max: factorU(a.max, f) });
export const union = (a: Range, b: Range): Range => ({ min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) });
export const sum = (rs: readonly Range[]): Range => rs.reduce(add, ZERO);

/** Go's uint64(x) of a non-negative float, saturating. */
export const toU64 = (x: number): number => (x >= MAX_U64 ? MAX_U64 : Math.max(0, Math.floor(x)));

/** cel-go's constants (common/cost.go). */
export const STRING_TRAVERSAL = 0.1;
export const REGEX_LENGTH = 0.25;
export const LIST_CREATE = 10;
export const MAP_CREATE = 30;
export const STRUCT_CREATE = 40;
