/**
 * Publishes our schemas as OpenAPI: every nested schema with a refName is hoisted into the document's
 * definitions (v2 `#/definitions/`, v3 `#/components/schemas/`) and referenced where it is used.
 *
 * A use site keeps what it says beyond the definition (a field's description, a default) next to
 * the reference. v3 wraps the reference as `allOf: [{$ref}]` then, as Kubernetes does, because
 * OpenAPI 3.0 ignores siblings of $ref. v2 keeps the siblings beside $ref, which is what
 * kube-openapi's v2 parser (kubectl 1.27/1.28) accepts; it rejects a $ref with a type or properties.
 *
 * A definition is written from the first schema that names it. When that use overrode the
 * description (`{ ...labelSelectorSchema, description }`), the definition carries the override; the
 * fields still show their own, which is what explain prints.
 */
import type { Schema } from '../api/schema.js';
import type { JsonValue } from '../api/types.js';

export type Dialect = 'v2' | 'v3';
export type JsonObject = { [key: string]: JsonValue };

const REF_PREFIX: Record<Dialect, string> = { v2: '#/definitions/', v3: '#/components/schemas/' };

/** Keys copied as they are (the value validations a CRD's schema may carry among them); refName is ours and never published. */
const PLAIN_KEYS = [
  'type',
  'format',
  'title',
  'description',
  'enum',
  'default',
  'required',
  'nullable',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'example',
  'externalDocs',
] as const;
const COMPOSITIONS = ['allOf', 'anyOf', 'oneOf'] as const;

const json = (v: unknown): JsonValue => v as JsonValue;
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The definitions of one document, filled as schemas are used. */
export class Definitions {
  private readonly bodies = new Map<string, JsonObject>();

  constructor(readonly dialect: Dialect) {}

  ref(name: string): JsonObject {
    return { $ref: REF_PREFIX[this.dialect] + name };
  }

  has(name: string): boolean {
    return this.bodies.has(name);
  }

  /**
   * Publishes schema under name, with extra keys (e.g. x-kubernetes-group-version-kind). The first
   * definition of a name wins: kinds share nested types (ObjectMeta, MatchResources) by name.
   */
  define(name: string, schema: Schema, extra: JsonObject = {}): void {
    if (this.bodies.has(name)) return;
    const body: JsonObject = {};
    // Registered before its children are converted, so a type that contains itself terminates.
    this.bodies.set(name, body);
    Object.assign(body, this.body(schema), extra);
  }

  /**
   * The schema as written at a use site. Properties always reference through allOf in v3 and carry
   * their description, as Kubernetes writes them: explain lists a type's fields with the fields' own
   * descriptions only (it prints "<no description>" otherwise). Items and additionalProperties are
   * bare references unless the site says something the definition does not.
   */
  use(schema: Schema, site: 'property' | 'items' | 'additionalProperties' = 'property'): JsonObject {
    const name = schema.refName;
    if (!name) return this.body(schema);
    this.define(name, schema);
    const def = this.bodies.get(name) as JsonObject;
    const siblings: JsonObject = {};
    if (schema.description !== undefined && (site === 'property' || schema.description !== def.description)) siblings.description = schema.description;
    if (schema.default !== undefined && !sameJson(schema.default, def.default)) siblings.default = json(schema.default);
    if (this.dialect === 'v2') return { ...this.ref(name), ...siblings };
    if (site !== 'property' && Object.keys(siblings).length === 0) return this.ref(name);
    return { allOf: [this.ref(name)], ...siblings };
  }

  /** Every definition, by name. */
  all(): Record<string, JsonObject> {
    return Object.fromEntries(this.bodies);
  }

  private body(schema: Schema): JsonObject {
    const out: JsonObject = {};
    for (const key of PLAIN_KEYS) if (schema[key] !== undefined) out[key] = json(schema[key]);
    if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, this.use(v)]));
    if (schema.items) out.items = this.use(schema.items, 'items');
    if (schema.additionalProperties) out.additionalProperties = this.use(schema.additionalProperties, 'additionalProperties');
    for (const key of COMPOSITIONS) if (schema[key]) out[key] = schema[key].map((s) => this.use(s, 'items'));
    if (schema.not) out.not = this.use(schema.not, 'items');
    for (const [key, value] of Object.entries(schema)) if (key.startsWith('x-kubernetes-') && value !== undefined) out[key] = json(value);
    return out;
  }
}

/**
 * A copy with object keys sorted, as Go's encoder writes maps. Documents are hashed for their
 * ETag, so the same registry must always give the same bytes.
 */
export function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortKeys(value[k])]),
  );
}
