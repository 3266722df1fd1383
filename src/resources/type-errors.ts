/**
 * Values whose JSON type does not fit the schema, e.g. `"failurePolicy": 5`. Kubernetes fails such a
 * body while decoding it into its Go types (a 400); here each one becomes a FieldValueTypeInvalid
 * error with its path, so the HTTP layer can answer 4xx and validators never meet a wrong type.
 * null is accepted anywhere, as Go decodes it to the zero value.
 */
import { FieldPath, typeInvalid, type FieldError } from './field-errors.js';
import { isObject } from './json-access.js';
import type { Schema } from './schema.js';

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The JSON type of a value, in the words of OpenAPI. */
export function jsonTypeOf(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function checkScalar(value: unknown, schema: Schema, path: FieldPath): FieldError | undefined {
  const got = jsonTypeOf(value);
  const wrong = (expected: string) => typeInvalid(path, got, `must be of type ${expected}`);
  if (schema['x-kubernetes-int-or-string']) return got === 'string' || got === 'integer' ? undefined : wrong('integer or string');
  switch (schema.type) {
    case 'string':
      if (got !== 'string') return wrong('string');
      // Lenient on fraction digits: JavaScript clients send milliseconds where Go writes microseconds.
      if (schema.format === 'date-time' && !(rfc3339.test(value as string) && !Number.isNaN(Date.parse(value as string)))) {
        return typeInvalid(path, value, 'must be an RFC 3339 date-time');
      }
      if (schema.format === 'byte' && !(base64.test(value as string) && (value as string).length % 4 === 0)) return typeInvalid(path, value, 'must be base64-encoded');
      return undefined;
    case 'integer':
      if (got !== 'integer') return wrong('integer');
      if (schema.format === 'int32' && ((value as number) < INT32.min || (value as number) > INT32.max)) return typeInvalid(path, value, 'must fit in a 32-bit integer');
      return undefined;
    case 'number':
      return got === 'integer' || got === 'number' ? undefined : wrong('number');
    case 'boolean':
      return got === 'boolean' ? undefined : wrong('boolean');
    default:
      return undefined;
  }
}

function walk(value: unknown, schema: Schema, path: FieldPath, out: FieldError[]): void {
  if (value === null || value === undefined) return;
  const isObjectSchema = schema.type === 'object' || (!schema.type && (schema.properties || schema.additionalProperties));
  if (isObjectSchema && !schema['x-kubernetes-int-or-string']) {
    if (!isObject(value)) {
      out.push(typeInvalid(path, jsonTypeOf(value), 'must be of type object'));
      return;
    }
    for (const [k, v] of Object.entries(value)) {
      // Own properties only: `constructor` or `__proto__` in a body are not declared fields.
      const declared = schema.properties && Object.hasOwn(schema.properties, k) ? schema.properties[k] : undefined;
      if (declared) walk(v, declared, path.child(k), out);
      else if (schema.additionalProperties) walk(v, schema.additionalProperties, path.key(k), out);
    }
    return;
  }
  if (schema.type === 'array') {
    if (!Array.isArray(value)) {
      out.push(typeInvalid(path, jsonTypeOf(value), 'must be of type array'));
      return;
    }
    if (schema.items) value.forEach((item, i) => walk(item, schema.items!, path.index(i), out));
    return;
  }
  const err = checkScalar(value, schema, path);
  if (err) out.push(err);
}

/** Every value of obj whose JSON type contradicts the schema. */
export function findTypeErrors(obj: unknown, schema: Schema): FieldError[] {
  const out: FieldError[] = [];
  walk(obj, schema, FieldPath.root(''), out);
  return out;
}
