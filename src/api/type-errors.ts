/**
 * Values whose JSON type does not fit the schema, e.g. `"failurePolicy": 5`. Kubernetes fails such a
 * body while decoding it into its Go types (a 400); here each one becomes a FieldValueTypeInvalid
 * error with its path, so the HTTP layer can answer 4xx and validators never meet a wrong type.
 * null is accepted anywhere, as Go decodes it to the zero value. The walk is field-check.ts's.
 */
import { checkFields, jsonTypeOf } from './field-check.js';
import type { FieldError } from './field-errors.js';
import type { Schema } from './schema.js';

export { jsonTypeOf };

const TYPES = { types: true, unknown: false, prune: false };

/** Every value of obj whose JSON type contradicts the schema. */
export function findTypeErrors(obj: unknown, schema: Schema): FieldError[] {
  return checkFields(obj, schema, TYPES).typeErrors;
}
