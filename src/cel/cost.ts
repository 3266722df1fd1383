/**
 * A static cost estimate, as Kubernetes computes one at compile time: each operation costs about 1,
 * string and list work costs in proportion to their sizes, and a comprehension costs its range's
 * size times its step. Sizes come from the schema (maxItems, maxLength, maxProperties); where it
 * declares none, from the largest request (3 MiB) divided by the smallest element, as Kubernetes
 * does. The result is an upper bound: an expression above the limit is refused when written.
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { RE2_MATCHES } from './lib/regex.js';
import { escapeProperty } from './escaping.js';
import { minSerializedSize, propertySchema, type CelSchema } from './schema.js';

/** Kubernetes' per-expression static limit (StaticEstimatedCostLimit). */
export const STATIC_COST_LIMIT = 10_000_000;
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

const STRING_FACTOR = 0.1;
const REGEX_FACTOR = 0.25;
const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const STRING_METHODS = new Set([
  'contains',
  'startsWith',
  'endsWith',
  'lowerAscii',
  'upperAscii',
  'trim',
  'replace',
  'split',
  'substring',
  'indexOf',
  'lastIndexOf',
  'charAt',
  'join',
  'format',
  'reverse',
  'quote',
  'size',
]);
// matches is compiled to the RE2 implementation (regex-calls.ts) before it is estimated.
const REGEX_METHODS = new Set(['matches', RE2_MATCHES, 'find', 'findAll']);
const LIST_METHODS = new Set(['isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf', 'distinct', 'sort', 'flatten', 'reverse', 'slice', 'join']);

/** What is known of a value: its schema (when it comes from one) and its largest size. */
export interface Estimate {
  cost: number;
  size: number;
  schema?: CelSchema;
  /** For a list: what is known of one element. */
  elem?: Estimate;
}

export type Scope = ReadonlyMap<string, Estimate>;

/**
 * The largest size of a value of this schema (characters, items or entries), as Kubernetes'
 * SchemaDeclType bounds it (apiserver/pkg/cel/common/schemas.go): a string's maxLength in bytes
 * (4 per code point), an enum's longest value, a date or duration's longest text, else what fits
 * in the largest request; a list or map's maxItems/maxProperties, else as many of its smallest
 * element as fit in the largest request.
 */
export function sizeOf(s: CelSchema | undefined): number {
  if (!s) return MAX_REQUEST_BYTES;
  if (s['x-kubernetes-int-or-string']) return s.maxLength !== undefined ? Math.max(0, s.maxLength) * 4 : MAX_REQUEST_BYTES - 2;
  switch (s.type) {
    case 'string':
      if (s.format === 'byte') return s.maxLength !== undefined ? Math.max(0, s.maxLength) : MAX_REQUEST_BYTES - 2;
      if (s.format === 'duration' || s.format === 'date-time') return 32;
      if (s.format === 'date') return 12;
      if (s.maxLength !== undefined) return Math.max(0, s.maxLength) * 4;
      if (s.enum && s.enum.length > 0) return Math.max(0, ...s.enum.map((v) => (typeof v === 'string' ? Buffer.byteLength(v) : 0)));
      return MAX_REQUEST_BYTES - 2;
    case 'array':
      return s.maxItems ?? Math.floor((MAX_REQUEST_BYTES - 2) / (minSerializedSize(s.items) + 1));
    case 'object':
      if (typeof s.additionalProperties === 'object') return s.maxProperties ?? Math.floor((MAX_REQUEST_BYTES - 2) / (minSerializedSize(s.additionalProperties) + 6));
      return s.properties ? Object.keys(s.properties).length : MAX_REQUEST_BYTES;
    default:
      return 1;
  }
}

export function fromSchema(s: CelSchema | undefined): Estimate {
  return { cost: 0, size: sizeOf(s), schema: s, elem: s?.type === 'array' ? fromSchema(s.items) : undefined };
}

const unknown = (cost: number): Estimate => ({ cost, size: MAX_REQUEST_BYTES });

export function estimate(node: ASTNode, scope: Scope): Estimate {
  switch (node.op) {
    case 'value': {
      const v = node.args;
      return { cost: 0, size: typeof v === 'string' ? v.length : v instanceof Uint8Array ? v.length : 1 };
    }
    case 'id': {
      const e = scope.get(node.args);
      return e ? { ...e, cost: 1 } : unknown(1);
    }
    case '.':
    case '.?': {
      const [target, field] = node.args;
      const t = estimate(target, scope);
      const s = propertySchema(t.schema, field) ?? escapedPropertySchema(t.schema, field);
      return s ? { ...fromSchema(s), cost: t.cost + 1 } : unknown(t.cost + 1);
    }
    case '[]':
    case '[?]': {
      const t = estimate(node.args[0], scope);
      const i = estimate(node.args[1], scope);
      const cost = t.cost + i.cost + 1;
      if (t.elem) return { ...t.elem, cost };
      const key = node.args[1].op === 'value' ? String(node.args[1].args) : undefined;
      const s = key !== undefined ? propertySchema(t.schema, key) : typeof t.schema?.additionalProperties === 'object' ? t.schema.additionalProperties : undefined;
      return s ? { ...fromSchema(s), cost } : unknown(cost);
    }
    case 'list': {
      const items = node.args.map((a) => estimate(a, scope));
      return { cost: 10 + sum(items), size: items.length, elem: items.length ? widest(items) : undefined };
    }
    case 'map': {
      const parts = node.args.flatMap(([k, v]) => [estimate(k, scope), estimate(v, scope)]);
      return { cost: 30 + sum(parts), size: node.args.length };
    }
    case '&&':
    case '||': {
      const [l, r] = node.args.map((a) => estimate(a, scope));
      return { cost: l.cost + r.cost, size: 1 };
    }
    case '?:': {
      const [c, t, f] = node.args.map((a) => estimate(a, scope));
      const big = t.cost >= f.cost ? t : f;
      return { ...big, size: Math.max(t.size, f.size), cost: c.cost + big.cost };
    }
    case '!_':
    case '-_': {
      const a = estimate(node.args, scope);
      return { cost: a.cost + 1, size: 1 };
    }
    case 'call':
      return estimateCall(node.args[0], undefined, node.args[1], scope);
    case 'rcall':
      return estimateCall(node.args[0], node.args[1], node.args[2], scope);
    default:
      return estimateBinary(node.op, node.args as [ASTNode, ASTNode], scope);
  }
}

function estimateBinary(op: string, args: [ASTNode, ASTNode], scope: Scope): Estimate {
  const l = estimate(args[0], scope);
  const r = estimate(args[1], scope);
  const base = l.cost + r.cost + 1;
  if (op === '+') {
    const size = l.size + r.size;
    return { cost: base + Math.ceil(size * STRING_FACTOR), size, elem: l.elem ?? r.elem };
  }
  if (op === 'in') return { cost: base + r.size, size: 1 };
  if (op === '==' || op === '!=' || op === '<' || op === '<=' || op === '>' || op === '>=') {
    return { cost: base + Math.ceil(Math.min(l.size, r.size) * STRING_FACTOR), size: 1 };
  }
  return { cost: base, size: 1 };
}

function estimateCall(name: string, receiver: ASTNode | undefined, args: ASTNode[], scope: Scope): Estimate {
  if (receiver && COMPREHENSIONS.has(name) && args[0]?.op === 'id') {
    const range = estimate(receiver, scope);
    const inner = new Map(scope);
    // A map's keys are Kubernetes' bare string type, which declares no size (MaxElements 0): the
    // estimator takes them as empty, so `self.all(k, k.matches(…))` costs the map's size, not 3 MiB per key.
    inner.set(args[0].args as string, range.elem ?? (range.schema && typeof range.schema.additionalProperties === 'object' ? { cost: 0, size: 0 } : unknown(0)));
    const steps = args.slice(1).map((a) => estimate(a, inner));
    const stepCost = sum(steps) + 1;
    const out: Estimate = { cost: range.cost + range.size * stepCost, size: name === 'map' || name === 'filter' ? range.size : 1 };
    if (name === 'filter') out.elem = range.elem;
    if (name === 'map') out.elem = steps[steps.length - 1];
    return out;
  }
  if (name === 'bind' && receiver?.op === 'id' && receiver.args === 'cel' && args[0]?.op === 'id') {
    const init = estimate(args[1], scope);
    const inner = new Map(scope);
    inner.set(args[0].args as string, { ...init, cost: 0 });
    const body = estimate(args[2], inner);
    return { ...body, cost: init.cost + body.cost };
  }
  if (name === 'has') return { cost: 1 + (args[0] ? estimate(args[0], scope).cost - 1 : 0), size: 1 };
  const r = receiver ? estimate(receiver, scope) : undefined;
  const as = args.map((a) => estimate(a, scope));
  let cost = 1 + (r?.cost ?? 0) + sum(as);
  let size = 1;
  const subject = r ?? as[0];
  if (REGEX_METHODS.has(name)) {
    cost += Math.ceil((subject?.size ?? 1) * STRING_FACTOR) * Math.max(1, Math.ceil((as[0]?.size ?? 1) * REGEX_FACTOR));
    size = subject?.size ?? 1;
  } else if (r && LIST_METHODS.has(name) && r.elem) {
    cost += r.size;
    size = r.size;
  } else if (STRING_METHODS.has(name) && subject) {
    cost += Math.ceil(subject.size * STRING_FACTOR);
    size = subject.size;
  }
  return { cost, size, elem: r?.elem };
}

/** A property a CRD rule names by its escaped name (`__namespace__`, `x__dash__y`). */
function escapedPropertySchema(s: CelSchema | undefined, field: string): CelSchema | undefined {
  if (!s?.properties || !field.includes('__')) return undefined;
  for (const [name, ps] of Object.entries(s.properties)) if (escapeProperty(name) === field) return ps;
  return undefined;
}

function sum(es: Estimate[]): number {
  return es.reduce((a, e) => a + e.cost, 0);
}

function widest(es: Estimate[]): Estimate {
  return es.reduce((a, e) => (e.size > a.size ? e : a));
}

/** Kubernetes' words for an expression over the limit. */
export function costExceededDetail(cost: number, limit: number): string {
  const factor = cost / limit;
  const shown = factor >= 100 ? factor.toFixed(0) : factor.toFixed(1);
  return `estimated rule cost exceeds budget by factor of ${shown}x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
