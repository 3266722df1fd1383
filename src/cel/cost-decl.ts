/**
 * What the cost estimator knows of a schema, as Kubernetes' SchemaDeclType derives it
 * (apiserver/pkg/cel/common/schemas.go): each value's largest size (MaxElements) and smallest JSON
 * (MinSerializedSize), its CEL kind, and its fields, items, values and keys. The estimator looks
 * sizes up by path (`self`, `spec`, `@items`, `@values`, `@keys`), as the CRD size estimator does
 * (apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go).
 *
 * Sizes: a string's maxLength × 4 bytes (a code point is up to 4), else an enum's longest value,
 * else what fits in the largest request (3 MiB − 2 for the quotes); a date 12, a date-time or
 * duration 32; bytes their maxLength; a list or map its maxItems/maxProperties, else as many of
 * its smallest element as fit in a request. Objects, numbers and booleans declare no size (0), and
 * neither do a map's keys (Kubernetes' shared string type): the estimator takes them as 0.
 */
import { escapeProperty, isReservedWord } from './escaping.js';
import type { CelSchema } from './schema.js';

/** celconfig.MaxRequestSizeBytes. */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

export type DeclKind = 'struct' | 'list' | 'map' | 'string' | 'bytes' | 'int' | 'double' | 'bool' | 'dyn' | 'duration' | 'timestamp';

export interface Decl {
  readonly kind: DeclKind;
  readonly maxElements: number;
  readonly minSize: number;
  /** A struct's field by its CEL name; a list's items or a map's values; a map's keys. */
  field(name: string): Decl | undefined;
  readonly elem?: Decl;
  readonly key?: Decl;
}

const scalar = (kind: DeclKind, minSize: number, maxElements = 0): Decl => ({ kind, maxElements, minSize, field: () => undefined });
const STRING_KEY = scalar('string', 2);
const BOOL = scalar('bool', 4);
const DOUBLE = scalar('double', 1);
const INT = scalar('int', 1);
const ROOT_STRING: CelSchema = { type: 'string' };

/**
 * The decl of a schema, or undefined where Kubernetes exposes none to CEL (no type, a list without
 * items, a map whose values have none). `root`: a resource's root (or an embedded resource), where
 * apiVersion, kind and metadata.name/generateName are always there. `escaped`: fields are named as
 * a CRD's rules name them (`__namespace__`); admission policies name them as they are.
 */
export function declOf(s: CelSchema | undefined, root: boolean, escaped = true): Decl | undefined {
  return s ? cached(s, root, escaped) : undefined;
}

const caches = [new WeakMap<CelSchema, Decl | null>(), new WeakMap<CelSchema, Decl | null>(), new WeakMap<CelSchema, Decl | null>(), new WeakMap<CelSchema, Decl | null>()];

function cached(s: CelSchema, root: boolean, escaped: boolean): Decl | undefined {
  const cache = caches[(root ? 1 : 0) + (escaped ? 2 : 0)]!;
  const hit = cache.get(s);
  if (hit !== undefined) return hit ?? undefined;
  // A schema inside itself (a CRD's own JSONSchemaProps) meets itself as an empty object.
  cache.set(s, scalar('struct', 2));
  const d = build(s, root, escaped);
  cache.set(s, d ?? null);
  return d;
}

function build(s: CelSchema, root: boolean, escaped: boolean): Decl | undefined {
  if (s['x-kubernetes-int-or-string']) return scalar('dyn', 1, s.maxLength !== undefined ? Math.max(0, s.maxLength) * 4 : MAX_REQUEST_BYTES - 2);
  const t = root ? withTypeAndObjectMeta(s) : s;
  switch (t.type) {
    case 'array': {
      const items = t.items ? declOf(t.items, t.items['x-kubernetes-embedded-resource'] === true, escaped) : undefined;
      if (!items) return undefined;
      const maxElements = t.maxItems !== undefined ? Math.max(0, t.maxItems) : Math.floor((MAX_REQUEST_BYTES - 2) / (items.minSize + 1));
      return { kind: 'list', maxElements, minSize: 2, elem: items, field: () => undefined };
    }
    case 'object':
      return typeof t.additionalProperties === 'object' ? mapDecl(t, t.additionalProperties, escaped) : structDecl(t, escaped);
    case 'string':
      return stringDecl(t);
    case 'boolean':
      return BOOL;
    case 'number':
      return DOUBLE;
    case 'integer':
      return INT;
    default:
      return undefined;
  }
}

function mapDecl(s: CelSchema, values: CelSchema, escaped: boolean): Decl | undefined {
  const elem = declOf(values, values['x-kubernetes-embedded-resource'] === true, escaped);
  if (!elem) return undefined;
  const maxElements = s.maxProperties !== undefined ? Math.max(0, s.maxProperties) : Math.floor((MAX_REQUEST_BYTES - 2) / (elem.minSize + 6));
  return { kind: 'map', maxElements, minSize: 2, elem, key: STRING_KEY, field: () => undefined };
}

function structDecl(s: CelSchema, escaped: boolean): Decl {
  const props = s.properties ?? {};
  const byName = new Map<string, CelSchema>();
  for (const [name, ps] of Object.entries(props)) {
    const field = escaped ? escapeProperty(name) : name;
    if (field !== undefined) byName.set(field, ps);
  }
  const required = new Set(s.required ?? []);
  let minSize = 2;
  for (const [name, ps] of Object.entries(props)) {
    if (!required.has(name) || ps.default !== undefined) continue;
    const d = declOf(ps, ps['x-kubernetes-embedded-resource'] === true, escaped);
    if (d) minSize += Buffer.byteLength(name) + d.minSize + 4;
  }
  return {
    kind: 'struct',
    maxElements: 0,
    minSize,
    field(name: string) {
      const ps = byName.get(name) ?? (escaped && isReservedWord(name) ? byName.get(`__${name}__`) : undefined);
      return ps ? declOf(ps, ps['x-kubernetes-embedded-resource'] === true, escaped) : undefined;
    },
  };
}

function stringDecl(s: CelSchema): Decl {
  const request = MAX_REQUEST_BYTES - 2;
  switch (s.format) {
    case 'byte':
      return scalar('bytes', 2, s.maxLength !== undefined ? Math.max(0, s.maxLength) : request);
    case 'duration':
      return scalar('duration', 3, 32);
    case 'date':
      return scalar('timestamp', 12, 12);
    case 'date-time':
      return scalar('timestamp', 21, 32);
  }
  if (s.maxLength !== undefined) return scalar('string', 2, Math.max(0, s.maxLength) * 4);
  if (s.enum && s.enum.length > 0) return scalar('string', 2, Math.max(0, ...s.enum.map((v) => (typeof v === 'string' ? Buffer.byteLength(v) : 0))));
  return scalar('string', 2, request);
}

/** Kubernetes' WithTypeAndObjectMeta: unless all are declared as strings, kind, apiVersion and metadata{name, generateName} replace them. */
function withTypeAndObjectMeta(s: CelSchema): CelSchema {
  const p = s.properties;
  const meta = p?.metadata;
  if (p?.kind?.type === 'string' && p.apiVersion?.type === 'string' && meta?.type === 'object' && meta.properties?.name?.type === 'string' && meta.properties.generateName?.type === 'string') return s;
  return {
    ...s,
    type: s.type ?? 'object',
    properties: { ...p, kind: ROOT_STRING, apiVersion: ROOT_STRING, metadata: { type: 'object', properties: { name: ROOT_STRING, generateName: ROOT_STRING } } },
  };
}

/** The decl at a path below a root decl; the first element (the variable) is skipped, as Kubernetes skips it. */
export function declAt(root: Decl | undefined, path: readonly string[]): Decl | undefined {
  let d = root;
  for (let i = 1; i < path.length && d; i++) {
    const step = path[i]!;
    d = step === '@items' || step === '@values' ? d.elem : step === '@keys' ? d.key : d.field(step);
  }
  return d;
}

/** The fewest JSON bytes a value of the schema serializes to (MinSerializedSize). */
export function minSerializedSize(s: CelSchema | undefined, root = false): number {
  return declOf(s, root)?.minSize ?? 1;
}
