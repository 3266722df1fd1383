/**
 * Fields a body carries that the kind's schema does not declare. Kubernetes drops them, and warns
 * (fieldValidation=Warn) or rejects the request (Strict) naming each one as `unknown field "spec.foo"`,
 * list items included as `spec.validations[0].bogus`. The walk follows properties, map values
 * (additionalProperties) and list items, and stops under x-kubernetes-preserve-unknown-fields.
 */
import { FieldPath } from './field-errors.js';
import { isObject } from './json-access.js';
import type { Schema } from './schema.js';

export { findTypeErrors } from './type-errors.js';

export interface UnknownField {
  path: string;
  kind: 'unknown';
}

/** The warning (or Strict error) text Kubernetes uses for one unknown field. */
export const unknownFieldMessage = (f: UnknownField): string => `unknown field ${JSON.stringify(f.path)}`;

function walk(value: unknown, schema: Schema, path: FieldPath, out: UnknownField[], prune: boolean): void {
  if (schema['x-kubernetes-preserve-unknown-fields']) return;
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((item, i) => walk(item, schema.items!, path.index(i), out, prune));
    return;
  }
  if (!isObject(value)) return;
  for (const key of Object.keys(value)) {
    // Own properties only: `constructor` or `__proto__` in a body are unknown fields like any other.
    const declared = schema.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    if (declared) {
      walk(value[key], declared, path.child(key), out, prune);
    } else if (schema.additionalProperties) {
      walk(value[key], schema.additionalProperties, path.key(key), out, prune);
    } else if (schema.properties) {
      out.push({ path: String(path.child(key)), kind: 'unknown' });
      if (prune) delete value[key];
    }
  }
}

/** Every undeclared field of obj, in document order. */
export function findUnknownFields(obj: unknown, schema: Schema): UnknownField[] {
  const out: UnknownField[] = [];
  walk(obj, schema, FieldPath.root(''), out, false);
  return out;
}

/** Removes the undeclared fields in place (what Kubernetes persists) and returns what it removed. */
export function pruneUnknownFields(obj: unknown, schema: Schema): UnknownField[] {
  const out: UnknownField[] = [];
  walk(obj, schema, FieldPath.root(''), out, true);
  return out;
}
