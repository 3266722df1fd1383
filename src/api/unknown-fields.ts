/**
 * Fields a body carries that the kind's schema does not declare. Kubernetes drops them, and warns
 * (fieldValidation=Warn) or rejects the request (Strict) naming each one as `unknown field "spec.foo"`,
 * list items included as `spec.validations[0].bogus`. The walk (field-check.ts) follows properties, map
 * values (additionalProperties) and list items, and stops under x-kubernetes-preserve-unknown-fields.
 */
import { checkFields, type UnknownField } from './field-check.js';
import type { Schema } from './schema.js';

export { findTypeErrors } from './type-errors.js';
export type { UnknownField };

/** The warning (or Strict error) text Kubernetes uses for one unknown field. */
export const unknownFieldMessage = (f: UnknownField): string => `unknown field ${JSON.stringify(f.path)}`;

/** Every undeclared field of obj, in document order. */
export function findUnknownFields(obj: unknown, schema: Schema): UnknownField[] {
  return checkFields(obj, schema, { types: false, unknown: true, prune: false }).unknown;
}

/** Removes the undeclared fields in place (what Kubernetes persists) and returns what it removed. */
export function pruneUnknownFields(obj: unknown, schema: Schema): UnknownField[] {
  return checkFields(obj, schema, { types: false, unknown: true, prune: true }).unknown;
}
