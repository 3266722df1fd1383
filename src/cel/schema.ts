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
