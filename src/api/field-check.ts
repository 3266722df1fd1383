/**
 * The checks a body's fields go through against a kind's schema, in one walk: values whose JSON
 * type does not fit (type-errors.ts words the rule) and fields the schema does not declare
 * (unknown-fields.ts), each found with its field path (`spec.validations[0].expression`).
 *
 * One walk, not one per check, over schema nodes compiled once (a Map of the declared properties,
 * the node's rules as flags) and paths made only for what is reported: a generic walk per check
 * that made a FieldPath string for every field of every body was most of a create's checks.
 */
import { FieldPath, typeInvalid, type FieldError } from './field-errors.js';
import { isObject } from './json-access.js';
import type { Schema } from './schema.js';

export interface UnknownField {
  path: string;
  kind: 'unknown';
}

export interface FieldCheck {
  /** Values whose JSON type contradicts the schema (null is accepted anywhere, as Go decodes it to the zero value). */
  types: boolean;
  /** Fields the schema does not declare (not looked for under x-kubernetes-preserve-unknown-fields). */
  unknown: boolean;
  /** Removes each unknown field from its object as it is found (what Kubernetes persists). */
  prune: boolean;
}

export interface FieldProblems {
  typeErrors: FieldError[];
  unknown: UnknownField[];
}

/** The JSON type of a value, in the words of OpenAPI. */
export function jsonTypeOf(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What is wrong with a value the type check does not descend into: the value (or its type) to report, and why. */
type Problem = { value: unknown; detail: string } | undefined;

function scalarProblem(value: unknown, schema: Schema): Problem {
  const got = jsonTypeOf(value);
  const wrong = (expected: string) => ({ value: got, detail: `must be of type ${expected}` });
  if (schema['x-kubernetes-int-or-string']) return got === 'string' || got === 'integer' ? undefined : wrong('integer or string');
  switch (schema.type) {
    case 'string':
      if (got !== 'string') return wrong('string');
      // Lenient on fraction digits: JavaScript clients send milliseconds where Go writes microseconds.
      if (schema.format === 'date-time' && !(rfc3339.test(value as string) && !Number.isNaN(Date.parse(value as string)))) {
        return { value, detail: 'must be an RFC 3339 date-time' };
      }
      if (schema.format === 'byte' && !(base64.test(value as string) && (value as string).length % 4 === 0)) return { value, detail: 'must be base64-encoded' };
      return undefined;
    case 'integer':
      if (got !== 'integer') return wrong('integer');
      if (schema.format === 'int32' && ((value as number) < INT32.min || (value as number) > INT32.max)) return { value, detail: 'must fit in a 32-bit integer' };
      return undefined;
    case 'number':
      return got === 'integer' || got === 'number' ? undefined : wrong('number');
    case 'boolean':
      return got === 'boolean' ? undefined : wrong('boolean');
    default:
      return undefined;
  }
}

/** A schema node's rules, worked out once. */
interface Node {
  readonly schema: Schema;
  /** The type check wants an object here, and looks into its declared and map fields. */
  readonly object: boolean;
  readonly array: boolean;
  readonly preserve: boolean;
  readonly properties: Map<string, Schema> | undefined;
  readonly additional: Schema | undefined;
  readonly items: Schema | undefined;
}

const compiled = new WeakMap<Schema, Node>();

function nodeOf(schema: Schema): Node {
  let n = compiled.get(schema);
  if (!n) {
    const intOrString = schema['x-kubernetes-int-or-string'] === true;
    const objectSchema = schema.type === 'object' || (!schema.type && (schema.properties !== undefined || schema.additionalProperties !== undefined));
    n = {
      schema,
      object: objectSchema && !intOrString,
      array: schema.type === 'array',
      preserve: schema['x-kubernetes-preserve-unknown-fields'] === true,
      // Own properties only: `constructor` or `__proto__` in a body are not declared fields.
      properties: schema.properties && new Map(Object.entries(schema.properties)),
      additional: schema.additionalProperties,
      items: schema.items,
    };
    compiled.set(schema, n);
  }
  return n;
}

/** The path to where the walk is: field names, list indices, and map keys (marked by KEY before them). */
const KEY = Symbol('key');
type Step = string | number | typeof KEY;

function pathOf(trail: readonly Step[]): FieldPath {
  let p = FieldPath.root('');
  for (let i = 0; i < trail.length; i++) {
    const s = trail[i];
    if (s === KEY) p = p.key(trail[++i] as string);
    else p = typeof s === 'number' ? p.index(s) : p.child(s);
  }
  return p;
}

/** Type errors and unknown fields of value against schema, each list in document order. */
export function checkFields(value: unknown, schema: Schema, check: FieldCheck): FieldProblems {
  const out: FieldProblems = { typeErrors: [], unknown: [] };
  const trail: Step[] = [];
  const typeError = (p: Problem): void => {
    if (p) out.typeErrors.push(typeInvalid(pathOf(trail), p.value, p.detail));
  };
  // types / unknown: whether each check is still looking at this node (they descend by different rules).
  const walk = (v: unknown, n: Node, types: boolean, unknown: boolean): void => {
    if (types && (v === null || v === undefined)) types = false;
    if (unknown && n.preserve) unknown = false;
    if (!types && !unknown) return;
    if (Array.isArray(v)) {
      if (types) {
        if (n.object) typeError({ value: 'array', detail: 'must be of type object' });
        else if (!n.array) typeError(scalarProblem(v, n.schema));
        types = n.array;
      }
      if ((!types && !unknown) || !n.items) return;
      const items = nodeOf(n.items);
      for (let i = 0; i < v.length; i++) {
        trail.push(i);
        walk(v[i], items, types, unknown);
        trail.pop();
      }
      return;
    }
    if (!isObject(v)) {
      if (types) typeError(n.object ? { value: jsonTypeOf(v), detail: 'must be of type object' } : n.array ? { value: jsonTypeOf(v), detail: 'must be of type array' } : scalarProblem(v, n.schema));
      return;
    }
    if (types && !n.object) {
      typeError(n.array ? { value: 'object', detail: 'must be of type array' } : scalarProblem(v, n.schema));
      types = false;
      if (!unknown) return;
    }
    for (const key of Object.keys(v)) {
      const declared = n.properties?.get(key);
      if (declared) {
        trail.push(key);
        walk(v[key], nodeOf(declared), types, unknown);
        trail.pop();
      } else if (n.additional) {
        trail.push(KEY, key);
        walk(v[key], nodeOf(n.additional), types, unknown);
        trail.length -= 2;
      } else if (unknown && n.properties) {
        trail.push(key);
        out.unknown.push({ path: String(pathOf(trail)), kind: 'unknown' });
        trail.pop();
        if (check.prune) delete v[key];
      }
    }
  };
  walk(value, nodeOf(schema), check.types, check.unknown);
  return out;
}
