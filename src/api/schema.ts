/**
 * The schema language of our kinds: a subset of OpenAPI v3 with the Kubernetes extensions.
 * One source feeds validation of unknown fields, defaults, strategic merge (patch strategies),
 * CEL typing and the published OpenAPI documents, so they cannot disagree.
 */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  enum?: string[];
  default?: unknown;
  properties?: Record<string, Schema>;
  /** A map with free keys: the schema of its values. */
  additionalProperties?: Schema;
  items?: Schema;
  required?: string[];
  /** OpenAPI definition name this schema is published under (hoisted into definitions/components). */
  refName?: string;
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-embedded-resource'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  // The value validations a CustomResourceDefinition's schema may carry (custom kinds only).
  title?: string;
  nullable?: boolean;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  example?: unknown;
  externalDocs?: { description?: string; url?: string };
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  'x-kubernetes-validations'?: ValidationRule[];
}

/** One CEL rule of a CustomResourceDefinition's schema (x-kubernetes-validations). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export const str = (description?: string, extra: Partial<Schema> = {}): Schema => ({ type: 'string', ...(description ? { description } : {}), ...extra });
export const int = (description?: string, format: 'int32' | 'int64' = 'int32'): Schema => ({ type: 'integer', format, ...(description ? { description } : {}) });
export const bool = (description?: string): Schema => ({ type: 'boolean', ...(description ? { description } : {}) });
export const strMap = (description?: string): Schema => ({ type: 'object', additionalProperties: { type: 'string' }, ...(description ? { description } : {}) });
export const arrayOf = (items: Schema, extra: Partial<Schema> = {}): Schema => ({ type: 'array', items, ...extra });
export const obj = (refName: string | undefined, properties: Record<string, Schema>, extra: Partial<Schema> = {}): Schema => ({
  type: 'object',
  ...(refName ? { refName } : {}),
  properties,
  ...extra,
});
/** A list merged by a key in strategic merge patch and apply (patchStrategy merge, patchMergeKey). */
export const mergeList = (items: Schema, key = 'name', description?: string): Schema => ({
  type: 'array',
  items,
  ...(description ? { description } : {}),
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': [key],
  'x-kubernetes-patch-strategy': 'merge',
  'x-kubernetes-patch-merge-key': key,
});
/** An atomic list: replaced whole by every patch. */
export const atomicList = (items: Schema, description?: string): Schema => ({
  type: 'array',
  items,
  ...(description ? { description } : {}),
  'x-kubernetes-list-type': 'atomic',
});
