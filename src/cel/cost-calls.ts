/**
 * The cost of one call, without its arguments' own costs, in the order cel-go asks: the cel-go
 * extensions' overload estimators (lists, sets), then Kubernetes' library estimator
 * (apiserver/pkg/cel/library/cost.go, by function name), then cel-go's own cases (string and list
 * concatenation, comparisons by size, `in` a list, matches, contains, startsWith), else 1.
 * Where the checker leaves an operand dyn, every overload it could be is estimated and the
 * widest range kept, as cel-go unions its candidate overloads.
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import type { Decl } from './cost-decl.js';
import { add, byFactor, fixed, LIST_CREATE, MAX_U64, mul, REGEX_LENGTH, STRING_TRAVERSAL, toU64, union, UNKNOWN, type Range } from './cost-math.js';

export interface Operand {
  node: ASTNode;
  /** cel-go's kind: string, bytes, int, list, map, struct, opaque, dyn, … */
  kind: string;
  typeName: string;
  size: Range;
  path?: string[];
  decl?: Decl;
  /** For a list or map: the size of one element (listElementNode's). */
  elemSize?: Range;
}

export interface CallCost {
  cost: Range;
  size?: Range;
}

/** Receivers that name a library's namespace (`sets.contains(…)`), not a value. */
export const NAMESPACES = new Set(['sets', 'strings', 'ip', 'format', 'jsonpatch', 'lists', 'math', 'base64', 'optional', 'cel']);

const ONE: CallCost = { cost: fixed(1) };
const AUTHZ = new Set(['serviceAccount', 'path', 'group', 'resource', 'subresource', 'namespace', 'name', 'allowed', 'reason', 'error', 'errored']);
const NOMINAL = new Set([
  'masked',
  'prefixLength',
  'family',
  'isUnspecified',
  'isLoopback',
  'isLinkLocalMulticast',
  'isLinkLocalUnicast',
  'isGlobalUnicast',
  'format.named',
  'sign',
  'asInteger',
  'isInteger',
  'asApproximateFloat',
  'isGreaterThan',
  'isLessThan',
  'compareTo',
  'add',
  'sub',
  'major',
  'minor',
  'patch',
  'getScheme',
  'getHostname',
  'getHost',
  'getPort',
  'getEscapedPath',
  'getQuery',
]);
const COMPARABLE = new Set(['bool', 'bytes', 'double', 'duration', 'int', 'string', 'timestamp', 'uint']);
const O1_EQUALITY = new Set(['net.IP', 'net.CIDR', 'kubernetes.Quantity', 'kubernetes.Semver', 'kubernetes.authorization.Authorizer']);

const traverse = (s: Range): Range => byFactor(s, STRING_TRAVERSAL);
const isText = (k: string) => k === 'string' || k === 'bytes';

export function callEstimate(name: string, target: Operand | undefined, args: Operand[], _node: ASTNode): CallCost {
  return extensionEstimate(name, target, args) ?? kubernetesEstimate(name, target, args) ?? celEstimate(name, target, args) ?? ONE;
}

/** The literal int an argument is, if it is one (nodeAsIntValue). */
function literalInt(o: Operand | undefined, otherwise: number): number {
  const v = o?.node.op === 'value' ? (o.node.args as unknown) : undefined;
  if (typeof v !== 'bigint') return otherwise;
  return v < 0n ? 0 : Number(v);
}

function allocatingList(factor: number, size: Range): CallCost {
  return { cost: add(add(byFactor(size, factor), fixed(1)), fixed(LIST_CREATE)), size };
}

/** cel-go ext: lists (version 3) and sets overload estimators. */
function extensionEstimate(name: string, target: Operand | undefined, args: Operand[]): CallCost | undefined {
  if (name === 'sets.contains' || name === 'sets.intersects' || name === 'sets.equivalent') {
    if (args.length !== 2) return undefined;
    return { cost: add(byFactor(mul(args[0]!.size, args[1]!.size), name === 'sets.equivalent' ? 2 : 1), fixed(1)) };
  }
  if (name === 'lists.range' && !target && args.length === 1) return allocatingList(1, fixed(literalInt(args[0], MAX_U64)));
  if (!target || target.kind !== 'list') return undefined;
  const sz = target.size;
  switch (name) {
    case 'slice': {
      if (args.length !== 2) return undefined;
      const start = literalInt(args[0], 0);
      const end = literalInt(args[1], sz.max);
      return allocatingList(1, fixed(end >= start ? end - start : MAX_U64));
    }
    case 'reverse':
      return args.length === 0 ? allocatingList(1, sz) : undefined;
    case 'flatten':
      return args.length <= 1 ? allocatingList(args.length === 1 ? literalInt(args[0], MAX_U64) : 1, sz) : undefined;
    case 'distinct':
      return args.length === 0 ? allocatingList(2, mul(sz, sz)) : undefined;
    case 'sort': {
      const elem = elementKind(target);
      if (args.length !== 0 || !COMPARABLE.has(elem)) return undefined;
      return allocatingList(isText(elem) ? 2 + STRING_TRAVERSAL : 2, mul(sz, sz));
    }
  }
  return undefined;
}

/** The kind of a list's (or map's key's) elements, from the schema or the checker's type. */
export function elementKind(o: Operand): string {
  if (o.decl?.elem) return o.decl.kind === 'map' ? 'string' : o.decl.elem.kind;
  const m = /^(?:list<(.*)>|map<([^,]*),)/.exec(o.typeName);
  const inner = (m?.[1] ?? m?.[2] ?? 'dyn').trim();
  if (inner === 'google.protobuf.Duration') return 'duration';
  if (inner === 'google.protobuf.Timestamp') return 'timestamp';
  return inner;
}

/** The size of a list's elements, as the size estimator gives it. */
function elementSize(o: Operand): Range {
  return o.elemSize ?? UNKNOWN;
}

function kubernetesEstimate(name: string, target: Operand | undefined, args: Operand[]): CallCost | undefined {
  if (name === 'check') return { cost: fixed(350_000) };
  if (AUTHZ.has(name) || NOMINAL.has(name)) return ONE;
  switch (name) {
    case 'fieldSelector':
    case 'labelSelector':
      return args.length === 1 ? { cost: selectorCost(args[0]!.size) } : undefined;
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf': {
      if (!target) return undefined;
      if (target.kind === 'list' || target.kind === 'map' || /^(list|map)</.test(target.typeName)) {
        const elem = elementKind(target);
        const elCost = isText(elem) ? add(fixed(1), traverse(elementSize(target))) : fixed(1);
        return { cost: mul(target.size, elCost) };
      }
      return { cost: traverse(target.size) };
    }
    case 'url':
    case 'jsonpatch.escapeKey':
      return args.length === 1 ? { cost: traverse(args[0]!.size), size: args[0]!.size } : undefined;
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
      return target ? { cost: traverse(target.size), size: target.size } : undefined;
    case 'replace':
      return target && args.length >= 2 ? replaceCost(target.size, args[0]!.size, args[1]!.size) : undefined;
    case 'split': {
      if (!target) return undefined;
      const max = args.length > 1 ? literalInt(args[1], target.size.max) : target.size.max;
      return { cost: byFactor(target.size, 2 * STRING_TRAVERSAL), size: { min: 0, max } };
    }
    case 'join':
      return target ? joinCost(target, args[0]) : undefined;
    case 'find':
    case 'findAll': {
      if (!target || args.length < 1) return undefined;
      const str = traverse(add(target.size, fixed(1)));
      return { cost: mul(str, byFactor(args[0]!.size, REGEX_LENGTH)), size: { min: 0, max: target.size.max } };
    }
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
      return args.length >= 1 ? { cost: traverse(args[0]!.size) } : undefined;
    case 'ip':
      if (target?.typeName === 'net.CIDR') return ONE;
      return args.length >= 1 ? { cost: traverse(args[0]!.size) } : undefined;
    case 'ip.isCanonical':
      return args.length >= 1 ? { cost: byFactor(args[0]!.size, 2 * STRING_TRAVERSAL) } : undefined;
    case 'containsIP':
    case 'containsCIDR':
      return args.length >= 1 ? containsCost(name, args[0]!) : undefined;
    case 'validate':
      return args.length >= 1 ? { cost: byFactor(traverse(args[0]!.size), 128 * REGEX_LENGTH) } : undefined;
    case '_==_':
      return args.length === 2 ? equalityCost(args[0]!, args[1]!) : undefined;
  }
  return undefined;
}

function selectorCost(length: Range): Range {
  const parse = traverse(length);
  const requirements = byFactor(byFactor(length, 0.5), LIST_CREATE + 40);
  return add(add(fixed(LIST_CREATE), parse), requirements);
}

function replaceCost(sz: Range, toReplace: Range, replaceWith: Range): CallCost {
  let countMax: number;
  let retainedMax = 0;
  if (toReplace.min === 0) {
    countMax = sz.max < MAX_U64 ? sz.max + 1 : sz.max;
    retainedMax = sz.max;
  } else if (replaceWith.max <= toReplace.min) {
    countMax = 0;
    retainedMax = sz.max;
  } else countMax = toU64(Math.ceil(sz.max / toReplace.min));
  let countMin: number;
  let retainedMin = 0;
  if (toReplace.max === 0) {
    countMin = sz.min < MAX_U64 ? sz.min + 1 : sz.min;
    retainedMin = sz.min;
  } else if (toReplace.max <= replaceWith.min) {
    countMin = 0;
    retainedMin = sz.min;
  } else countMin = toU64(Math.ceil(sz.min / toReplace.max));
  const size = add(mul({ min: countMin, max: countMax }, replaceWith), { min: retainedMin, max: retainedMax });
  return { cost: byFactor(sz, 2 * STRING_TRAVERSAL), size };
}

function joinCost(target: Operand, sep: Operand | undefined): CallCost {
  const list = target.size;
  let sz: Range = { min: 0, max: 0 };
  if (target.kind === 'list' || /^(list|map)</.test(target.typeName)) sz = mul(list, elementSize(target));
  if (sep) {
    const separators = { min: list.min > 0 ? list.min - 1 : 0, max: list.max > 0 ? list.max - 1 : 0 };
    sz = add(sz, mul(sep.size, separators));
  }
  return { cost: traverse(sz), size: sz };
}

function containsCost(name: string, other: Operand): CallCost {
  const ip: Range = { min: 4, max: 16 };
  let cost = traverse(add(ip, ip));
  if (name === 'containsCIDR') cost = add(add(cost, traverse(ip)), fixed(1));
  if (other.kind === 'string' || other.typeName === 'string') cost = add(cost, traverse(other.size));
  return { cost };
}

/** Kubernetes' `_==_`: O(1) for its own opaque and struct types of the same type on both sides. */
function equalityCost(l: Operand, r: Operand): CallCost | undefined {
  if (l.typeName !== r.typeName) return undefined;
  if (O1_EQUALITY.has(l.typeName) || l.typeName.startsWith('kubernetes.authorization.')) return ONE;
  if (l.typeName === 'kubernetes.NamedFormat') return { cost: byFactor({ min: 1, max: 64 }, STRING_TRAVERSAL) };
  if (l.typeName === 'kubernetes.URL') return { cost: traverse({ min: 1, max: r.size.max }) };
  return undefined;
}

/** cel-go's own cases (checker/cost.go functionCost), by overload. */
function celEstimate(name: string, target: Operand | undefined, args: Operand[]): CallCost | undefined {
  switch (name) {
    case 'format':
      return target && target.kind === 'string' ? { cost: traverse(target.size) } : undefined;
    case 'bytes':
      return !target && args.length === 1 && args[0]!.kind === 'string' ? { cost: traverse(args[0]!.size), size: { min: args[0]!.size.min, max: args[0]!.size.max * 4 } } : undefined;
    case 'string':
      return !target && args.length === 1 && args[0]!.kind === 'bytes' ? { cost: traverse(args[0]!.size), size: { min: Math.floor(args[0]!.size.min / 4), max: args[0]!.size.max } } : undefined;
    case 'strings.quote':
      return args.length === 1 ? { cost: traverse(args[0]!.size), size: { min: args[0]!.size.min + 2, max: args[0]!.size.max * 2 + 2 } } : undefined;
    case 'startsWith':
    case 'endsWith':
      return target && args.length === 1 ? { cost: traverse(args[0]!.size) } : undefined;
    case 'matches':
      if (!target || args.length !== 1) return undefined;
      return { cost: mul(traverse(add(target.size, fixed(1))), byFactor(args[0]!.size, REGEX_LENGTH)) };
    case 'contains':
      return target && args.length === 1 ? { cost: mul(traverse(target.size), traverse(args[0]!.size)) } : undefined;
    case '_&&_':
    case '_||_':
      return undefined;
    case '_+_':
      return args.length === 2 ? concatCost(args[0]!, args[1]!) : undefined;
    case '_<_':
    case '_<=_':
    case '_>_':
    case '_>=_':
      return args.length === 2 ? orderingCost(args[0]!, args[1]!) : undefined;
    case '_==_':
    case '_!=_':
      return args.length === 2 ? { cost: bySmallerSize(args[0]!, args[1]!) } : undefined;
    case '_in_':
      return args.length === 2 ? inCost(args[1]!) : undefined;
  }
  return undefined;
}

function bySmallerSize(l: Operand, r: Operand): Range {
  const smallest = Math.min(l.size.max, r.size.max);
  return traverse({ min: smallest > 0 ? 1 : 0, max: smallest });
}

const ADDABLE = new Set(['string', 'bytes', 'list']);

/** `+`: strings and bytes cost their joined size × 0.1 and lists 1, both sized by the sum; any other 1. */
function concatCost(l: Operand, r: Operand): CallCost {
  const kinds = candidates(l.kind, r.kind);
  const size = add(l.size, r.size);
  let out: CallCost | undefined;
  for (const k of kinds) {
    const c: CallCost = k === 'list' ? { cost: fixed(1), size } : isText(k) ? { cost: traverse(size), size } : ONE;
    out = out ? { cost: union(out.cost, c.cost), ...(out.size || c.size ? { size: union(out.size ?? c.size!, c.size ?? out.size!) } : {}) } : c;
  }
  return out ?? ONE;
}

/** The kinds an overload of a binary operator may be chosen for: both operands' kind, or any when dyn. */
function candidates(a: string, b: string): string[] {
  if (a !== 'dyn') return [a];
  if (b !== 'dyn') return [b];
  return [...ADDABLE, 'int'];
}

function orderingCost(l: Operand, r: Operand): CallCost {
  const kinds = candidates(l.kind, r.kind);
  let cost: Range | undefined;
  for (const k of kinds) {
    const c = isText(k) ? bySmallerSize(l, r) : fixed(1);
    cost = cost ? union(cost, c) : c;
  }
  return { cost: cost ?? fixed(1) };
}

function inCost(container: Operand): CallCost {
  const list = container.size;
  if (container.kind === 'list') return { cost: list };
  if (container.kind === 'dyn') return { cost: union(list, fixed(1)) };
  return ONE;
}
