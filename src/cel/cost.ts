/**
 * The static cost estimate of a checked expression, as cel-go's checker estimates it
 * (checker/cost.go) with Kubernetes' library costs (apiserver/pkg/cel/library/cost.go) and its
 * schema-based sizes (cost-decl.ts): an identifier or a field costs 1, a literal 0, a list literal
 * 10 and a map literal 30 plus their parts, most functions 1 plus their arguments, the string,
 * list and regex functions in proportion to the sizes they work on, and a comprehension its
 * range's largest size times the cost of one step, where the step is the one cel-go's macro
 * expands to (all: 3 plus the predicate, exists: 4, exists_one: 2, map: 12, filter: 13).
 * has() costs only its operand, as Kubernetes sets PresenceTestHasCost(false).
 *
 * Only the maximum is what Kubernetes compares against its limits; minimums are kept because some
 * maximums depend on them (replace() counts the shortest match).
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { callEstimate, elementKind, NAMESPACES, type Operand } from './cost-calls.js';
import { declAt, type Decl } from './cost-decl.js';
import { add, fixed, LIST_CREATE, MAP_CREATE, mul, sum, union, UNKNOWN, ZERO, type Range } from './cost-math.js';
import { RE2_MATCHES } from './lib/regex.js';
import { arg, checked, checkedKind, isNumberLiteral, isScalarType, literalSize, SCALAR_TYPES, typeNameOf } from './cost-types.js';

/** Kubernetes' per-expression static limit (StaticEstimatedCostLimit). */
export const STATIC_COST_LIMIT = 10_000_000;

/** A container's element sizes, when an expression says them (a literal, a map() or filter()). */
interface Entry {
  list: boolean;
  key: Range;
  val: Range;
}

interface Local {
  path?: string[];
  size?: Range;
  entry?: Entry;
}

/** The root variables' decls, by name: Kubernetes looks every path up from the root it starts at. */
export type Roots = ReadonlyMap<string, Decl | undefined>;

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

export class CostEstimator {
  private readonly sizes = new Map<ASTNode, Range>();
  private readonly entries = new Map<ASTNode, Entry>();
  private readonly paths = new Map<ASTNode, string[]>();
  private readonly locals = new Map<string, Local[]>();

  constructor(
    private readonly roots: Roots,
    private readonly sizer: SizeEstimator = schemaSizes(roots),
  ) {}

  /** The maximum cost of the expression. */
  estimate(node: ASTNode): number {
    return this.cost(node).max;
  }

  cost(n: ASTNode): Range {
    switch (n.op) {
      case 'value':
        return ZERO;
      case 'id':
        return fixed(1);
      case '.':
        return this.select(n);
      case '.?':
        // cel-go's optional select is the call _?._, O(1).
        return add(fixed(1), this.cost(arg(n, 0)));
      case '[]':
        return this.index(n);
      case '[?]':
        return add(fixed(1), add(this.cost(arg(n, 0)), this.cost(arg(n, 1))));
      case 'list':
        return this.listLiteral(n);
      case 'map':
        return this.mapLiteral(n);
      case '&&':
      case '||': {
        const [l, r] = (n.args as unknown as ASTNode[]).map((a) => this.cost(a)) as [Range, Range];
        return { min: l.min, max: add(l, r).max };
      }
      case '?:':
        return this.conditional(n);
      case '-_':
        // cel-go's grammar reads `-1` and `-1.0` as one literal.
        if (isNumberLiteral(n.args as unknown as ASTNode)) return ZERO;
        return add(fixed(1), this.cost(n.args as unknown as ASTNode));
      case '!_':
        return add(fixed(1), this.cost(n.args as unknown as ASTNode));
      case 'call': {
        const [name, args] = n.args as unknown as [string, ASTNode[]];
        return this.call(n, name, undefined, args);
      }
      case 'rcall':
        return this.rcall(n);
      default:
        return this.operator(n, n.op, n.args as unknown as ASTNode[]);
    }
  }

  /** `google.protobuf.Duration`: a dotted name no variable starts, which cel-go's checker resolves to one identifier. */
  private qualifiedName(n: ASTNode): string | undefined {
    if (n.op === 'id') {
      const name = n.args as unknown as string;
      return this.roots.has(name) || this.locals.get(name)?.length ? undefined : name;
    }
    if (n.op !== '.') return undefined;
    const [operand, field] = n.args as unknown as [ASTNode, string];
    const q = this.qualifiedName(operand);
    return q === undefined ? undefined : `${q}.${field}`;
  }

  private select(n: ASTNode): Range {
    const qualified = this.qualifiedName(n);
    if (qualified !== undefined) {
      this.paths.set(n, [qualified]);
      return fixed(1);
    }
    const operand = arg(n, 0);
    const field = (n.args as unknown as [ASTNode, string])[1];
    let c = this.cost(operand);
    const kind = this.kindOf(operand);
    if (kind === 'map' || kind === 'struct') c = add(c, fixed(1));
    this.paths.set(n, [...(this.pathOf(operand) ?? []), field]);
    return c;
  }

  private index(n: ASTNode): Range {
    const [target, key] = n.args as unknown as [ASTNode, ASTNode];
    const c = add(fixed(1), add(this.cost(target), this.cost(key)));
    const list = this.kindOf(target) === 'list';
    this.paths.set(n, [...(this.pathOf(target) ?? []), list ? '@items' : '@values']);
    const entry = this.entryOf(target);
    const size = entry ? entry.val : this.computeSize(n);
    if (size) this.sizes.set(n, size);
    return c;
  }

  private listLiteral(n: ASTNode): Range {
    const items = n.args as unknown as ASTNode[];
    let val: Range = items.length === 0 ? ZERO : { min: Infinity, max: 0 };
    const costs = items.map((e) => {
      const c = this.cost(e);
      val = union(val, this.computeSize(e) ?? UNKNOWN);
      return c;
    });
    this.entries.set(n, { list: true, key: fixed(1), val });
    return add(sum(costs), fixed(LIST_CREATE));
  }

  private mapLiteral(n: ASTNode): Range {
    const pairs = n.args as unknown as [ASTNode, ASTNode][];
    let key: Range = pairs.length === 0 ? ZERO : { min: Infinity, max: 0 };
    let val: Range = key;
    const costs = pairs.map(([k, v]) => {
      const c = add(this.cost(k), this.cost(v));
      key = union(key, this.computeSize(k) ?? UNKNOWN);
      val = union(val, this.computeSize(v) ?? UNKNOWN);
      return c;
    });
    this.entries.set(n, { list: false, key, val });
    return add(sum(costs), fixed(MAP_CREATE));
  }

  private conditional(n: ASTNode): Range {
    const [c, t, f] = n.args as unknown as [ASTNode, ASTNode, ASTNode];
    const cost = add(this.cost(c), union(this.cost(t), this.cost(f)));
    this.sizes.set(n, union(this.computeSize(t) ?? UNKNOWN, this.computeSize(f) ?? UNKNOWN));
    const et = this.entryOf(t);
    const ef = this.entryOf(f);
    if (et && ef) this.entries.set(n, { list: et.list, key: union(et.key, ef.key), val: union(et.val, ef.val) });
    return cost;
  }

  private rcall(n: ASTNode): Range {
    const [name, receiver, args] = n.args as unknown as [string, ASTNode, ASTNode[]];
    if (COMPREHENSIONS.has(name) && (n as unknown as { meta: { alternate?: unknown } }).meta.alternate) return this.comprehension(n, name, receiver, args);
    if ((name === 'optMap' || name === 'optFlatMap') && args.length === 2 && args[0]!.op === 'id') return this.optMap(name, receiver, args);
    if (receiver.op === 'id' && !this.roots.has(receiver.args as string) && !this.locals.get(receiver.args as string)?.length) {
      const ns = receiver.args as string;
      if (ns === 'cel' && name === 'bind') return this.bind(n, args);
      if (NAMESPACES.has(ns)) return this.call(n, `${ns}.${name}`, undefined, args);
    }
    return this.call(n, name === RE2_MATCHES ? 'matches' : name, receiver, args);
  }

  private call(n: ASTNode, name: string, target: ASTNode | undefined, args: ASTNode[]): Range {
    if (name === 'has' && !target && args.length === 1 && args[0]!.op === '.') {
      // A presence test costs nothing of its own (PresenceTestHasCost(false)), only its operand.
      return this.cost(arg(args[0]!, 0));
    }
    if (name === 'dyn' && !target && args.length === 1) {
      const c = add(fixed(1), this.cost(args[0]!));
      this.copySizes(n, args[0]!);
      return c;
    }
    const argCosts = args.map((a) => this.cost(a));
    const operands = args.map((a) => this.operand(a));
    const targetCost = target ? this.cost(target) : ZERO;
    const est = callEstimate(name, target ? this.operand(target) : undefined, operands, n);
    const size = est.size ?? this.computeSize(n);
    if (size) this.sizes.set(n, size);
    return add(targetCost, add(est.cost, sum(argCosts)));
  }

  private operator(n: ASTNode, op: string, args: ASTNode[]): Range {
    return this.call(n, `_${op}_`, undefined, args);
  }

  /** A macro as cel-go expands it: range, init and result once, then loop condition and step per element. */
  private comprehension(n: ASTNode, name: string, range: ASTNode, args: ASTNode[]): Range {
    const rangeCost = this.cost(range);
    const iterVar = args[0]!.args as string;
    const entry = this.entryOf(range);
    const list = entry ? entry.list : this.kindOf(range) === 'list';
    this.push(iterVar, { path: [...(this.pathOf(range) ?? []), list ? '@items' : '@keys'], ...((list ? entry?.val : entry?.key) ? { size: list ? entry!.val : entry!.key } : {}) });
    let once: Range; // accumulator init and result
    let step: Range; // loop condition and step, per element
    try {
      switch (name) {
        case 'all': // init true, condition @not_strictly_false(acc), step acc && p, result acc
          once = fixed(1);
          step = add(fixed(3), this.cost(args[1]!));
          break;
        case 'exists': // condition @not_strictly_false(!acc), step acc || p
          once = fixed(1);
          step = add(fixed(4), this.cost(args[1]!));
          break;
        case 'exists_one': // init 0, step p ? acc + 1 : acc, result acc == 1
          once = fixed(2);
          step = add(this.cost(args[1]!), fixed(2));
          break;
        case 'map': {
          // init [], step [filter ?] acc + [fn] [: acc], result acc
          const fn = args[args.length - 1]!;
          const fnCost = this.cost(fn);
          const filterCost = args.length === 3 ? this.cost(args[1]!) : ZERO;
          once = fixed(LIST_CREATE + 1);
          step = add(filterCost, add(fixed(2 + LIST_CREATE), fnCost));
          this.entries.set(n, { list: true, key: fixed(1), val: union(ZERO, this.computeSize(fn) ?? UNKNOWN) });
          break;
        }
        default: {
          // filter: step p ? acc + [x] : acc
          once = fixed(LIST_CREATE + 1);
          step = add(this.cost(args[1]!), fixed(3 + LIST_CREATE));
          const item = this.computeSize(args[0]!) ?? UNKNOWN;
          this.entries.set(n, { list: true, key: fixed(1), val: union(ZERO, item) });
        }
      }
    } finally {
      this.pop(iterVar);
    }
    const count = this.computeSize(range) ?? UNKNOWN;
    this.sizes.set(n, name === 'map' || name === 'filter' ? count : fixed(1));
    return add(add(rangeCost, once), mul(count, step));
  }

  /**
   * cel-go's expansion: `t.hasValue() ? optional.of(cel.bind(v, t.value(), expr)) : optional.none()`
   * (optFlatMap without optional.of), so the receiver is costed twice.
   */
  private optMap(name: string, target: ASTNode, args: ASTNode[]): Range {
    const hasValue = add(fixed(1), this.cost(target));
    const value = add(fixed(1), this.cost(target));
    const inner = checked(target)?.valueType;
    const v = args[0]!.args as string;
    this.push(v, inner?.name !== undefined && SCALAR_TYPES.has(inner.name) ? { size: fixed(1) } : {});
    let body: Range;
    try {
      body = this.cost(args[1]!);
    } finally {
      this.pop(v);
    }
    const wrapped = add(fixed(name === 'optMap' ? 1 + LIST_CREATE : LIST_CREATE), add(value, body));
    return add(hasValue, union(wrapped, fixed(1)));
  }

  /** cel.bind(v, init, body): the empty range (a list literal, 10), the init and the body. */
  private bind(n: ASTNode, args: ASTNode[]): Range {
    const [v, init, body] = args as [ASTNode, ASTNode, ASTNode];
    const initCost = this.cost(init);
    const size = this.computeSize(init);
    const entry = this.entryOf(init);
    const path = this.pathOf(init);
    this.push(v.args as string, { ...(path ? { path } : {}), ...(size ? { size } : {}), ...(entry ? { entry } : {}) });
    let bodyCost: Range;
    try {
      bodyCost = this.cost(body);
    } finally {
      this.pop(v.args as string);
    }
    this.copySizes(n, body);
    return add(fixed(LIST_CREATE), add(initCost, bodyCost));
  }

  private push(name: string, l: Local): void {
    const stack = this.locals.get(name) ?? [];
    stack.push(l);
    this.locals.set(name, stack);
  }

  private pop(name: string): void {
    this.locals.get(name)?.pop();
  }

  private local(n: ASTNode): Local | undefined {
    if (n.op !== 'id') return undefined;
    const stack = this.locals.get(n.args as string);
    return stack?.[stack.length - 1];
  }

  private pathOf(n: ASTNode): string[] | undefined {
    if (n.op === 'id') return this.local(n)?.path ?? (this.local(n) ? undefined : [n.args as string]);
    return this.paths.get(n);
  }

  private declOf(n: ASTNode): Decl | undefined {
    const path = this.pathOf(n);
    if (!path || path.length === 0) return undefined;
    return declAt(this.roots.has(path[0]!) ? this.roots.get(path[0]!) : this.firstRoot(), path);
  }

  /** Kubernetes' size estimator starts every path at the rule's root, whatever its first name. */
  private firstRoot(): Decl | undefined {
    return this.roots.values().next().value;
  }

  /** computeSize: what the expression says, else the schema at its path, else 1 for a scalar type, else a local's size. */
  computeSize(n: ASTNode): Range | undefined {
    const known = this.sizes.get(n);
    if (known) return known;
    const literal = literalSize(n);
    if (literal) return literal;
    const s = this.sizer.estimateSize(this.pathOf(n), this.kindOf(n));
    if (s) {
      this.sizes.set(n, s);
      return s;
    }
    if (isScalarType(n)) return fixed(1);
    return this.local(n)?.size;
  }

  private entryOf(n: ASTNode): Entry | undefined {
    return this.entries.get(n) ?? this.local(n)?.entry;
  }

  private copySizes(dst: ASTNode, src: ASTNode): void {
    const s = this.computeSize(src);
    if (s) this.sizes.set(dst, s);
    const e = this.entryOf(src);
    if (e) this.entries.set(dst, e);
  }

  /** The CEL kind of a value: the schema's where its path leads to one (the checker types some as dyn), else the checker's. */
  kindOf(n: ASTNode): string {
    const d = this.declOf(n);
    if (d) return d.kind;
    return checkedKind(n);
  }

  private operand(n: ASTNode): Operand {
    const path = this.pathOf(n);
    const decl = this.declOf(n);
    const o: Operand = { node: n, kind: this.kindOf(n), typeName: typeNameOf(n), size: this.computeSize(n) ?? UNKNOWN, ...(path ? { path } : {}), ...(decl ? { decl } : {}) };
    // listElementNode: a list's (or map's) element, sized at the path's `@items` (on a map, its values).
    if (o.kind === 'list' || o.kind === 'map' || /^(list|map)</.test(o.typeName)) o.elemSize = this.sizer.estimateSize(path ? [...path, '@items'] : undefined, elementKind(o)) ?? UNKNOWN;
    return o;
  }
}

/** EstimateSize: the size of a value by its path (the first element a root variable) and its CEL kind. */
export interface SizeEstimator {
  estimateSize(path: readonly string[] | undefined, kind: string): Range | undefined;
}

/**
 * Kubernetes' CRD size estimator: the schema's MaxElements at the path, looked up from the root the
 * path starts at (or the rule's root, whatever its first name); nothing without a path.
 */
export function schemaSizes(roots: Roots): SizeEstimator {
  const first = roots.values().next().value;
  return {
    estimateSize(path) {
      if (!path || path.length === 0) return undefined;
      const d = declAt(roots.has(path[0]!) ? roots.get(path[0]!) : first, path);
      return d ? { min: 0, max: d.maxElements } : undefined;
    },
  };
}

/** Kubernetes' words for an expression over the limit (the compile error of an admission expression). */
export function costExceededDetail(cost: number, limit: number): string {
  const factor = cost / limit;
  const shown = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `estimated rule cost exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
