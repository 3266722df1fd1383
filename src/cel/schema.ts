/**
 * The part of a kind's schema the CEL environment reads: types (to give JSON numbers their CEL
 * int/double type and to type-check field names) and size bounds (for the cost estimate).
 * src/cel may not import src/resources, so this is declared structurally: a resources `Schema`
 * object can be passed as it is.
 */
export interface CelSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  properties?: Readonly<Record<string, CelSchema>>;
  additionalProperties?: CelSchema | boolean;
  items?: CelSchema;
  maxItems?: number;
  maxLength?: number;
  maxProperties?: number;
  required?: readonly string[];
  enum?: readonly unknown[];
  default?: unknown;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

/** The schema of a property, of a map value or of a list item; undefined when nothing is known. */
export function propertySchema(s: CelSchema | undefined, name: string): CelSchema | undefined {
  if (!s) return undefined;
  if (s.properties && Object.hasOwn(s.properties, name)) return s.properties[name];
  if (typeof s.additionalProperties === 'object') return s.additionalProperties;
  return undefined;
}

/**
 * The fewest JSON bytes a value of the schema serializes to, as Kubernetes' SchemaDeclType sizes it
 * (apiserver/pkg/cel/common/schemas.go): `""` for a string (a date 12, a date-time 21, a duration 3),
 * `0` for a number, `true` for a boolean, `[]` and `{}`, and for an object `{}` plus each required
 * property without a default (its name, its value, quotes, colon and comma). It bounds how many
 * values fit in a request, so how often a rule may run.
 */
export function minSerializedSize(s: CelSchema | undefined): number {
  if (!s) return 1;
  if (s['x-kubernetes-int-or-string']) return 1;
  switch (s.type) {
    case 'string':
      return s.format === 'date' ? 12 : s.format === 'date-time' ? 21 : s.format === 'duration' ? 3 : 2;
    case 'boolean':
      return 4;
    case 'number':
    case 'integer':
      return 1;
    case 'array':
      return 2;
    case 'object': {
      if (typeof s.additionalProperties === 'object') return 2;
      let size = 2;
      for (const name of s.required ?? []) {
        const p = s.properties && Object.hasOwn(s.properties, name) ? s.properties[name] : undefined;
        if (p && p.default === undefined) size += name.length + minSerializedSize(p) + 4;
      }
      return size;
    }
    default:
      return 1;
  }
}
