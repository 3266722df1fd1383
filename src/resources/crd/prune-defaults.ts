/**
 * What kube-apiserver does to a custom resource before validating it, by its CRD's structural schema:
 *
 * - pruning: fields the schema does not declare are dropped (and named, for fieldValidation Warn or
 *   Strict), except below x-kubernetes-preserve-unknown-fields, where only declared fields are
 *   looked into; apiVersion, kind and metadata of the resource and of embedded resources stay, and
 *   metadata keeps only ObjectMeta's fields;
 * - defaulting: a missing field with a default gets it, and so does a null one that may not be null;
 *   a null that may not be null and has no default is dropped first.
 */
import { checkFields } from '../../api/field-check.js';
import { cloneJson, isObject } from '../../api/json-access.js';
import { objectMetaSchema } from '../meta-schema.js';
import type { Schema } from '../../api/schema.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** Removes what the schema does not declare from the resource obj; returns the paths removed, sorted. */
export function pruneResource(obj: Record<string, unknown>, schema: Schema): string[] {
  const unknown = pruneValue(obj, { ...schema, 'x-kubernetes-embedded-resource': true });
  if (isObject(obj.metadata)) {
    for (const f of checkFields(obj.metadata, objectMetaSchema, { types: false, unknown: true, prune: true }).unknown) unknown.push(`metadata.${f.path}`);
  }
  return unknown.sort();
}

/** Removes what the schema does not declare from a value; returns the paths removed. */
export function pruneValue(x: unknown, schema: Schema): string[] {
  const unknown: string[] = [];
  prune(x, schema, [], unknown);
  return unknown;
}

function prune(x: unknown, s: Schema | undefined, path: string[], unknown: string[]): void {
  if (s?.['x-kubernetes-preserve-unknown-fields']) return keepUnknown(x, s, path, unknown);
  if (Array.isArray(x)) {
    x.forEach((item, i) => prune(item, s?.items, [...path, `[${i}]`], unknown));
    return;
  }
  if (!isObject(x)) return;
  for (const key of Object.keys(x)) {
    if (s?.['x-kubernetes-embedded-resource'] && META_FIELDS.has(key)) continue;
    const declared = s?.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
    const child = declared ?? (isObject(s?.additionalProperties) ? s.additionalProperties : undefined);
    if (child) prune(x[key], child, [...path, key], unknown);
    else {
      unknown.push(joinPath([...path, key]));
      delete x[key];
    }
  }
}

/** Under x-kubernetes-preserve-unknown-fields: unknown fields stay, declared ones are still pruned below. */
function keepUnknown(x: unknown, s: Schema, path: string[], unknown: string[]): void {
  if (Array.isArray(x)) {
    x.forEach((item, i) => s.items && keepUnknown(item, s.items, [...path, `[${i}]`], unknown));
    return;
  }
  if (!isObject(x)) return;
  for (const key of Object.keys(x)) {
    if (s['x-kubernetes-embedded-resource'] && META_FIELDS.has(key)) continue;
    const declared = s.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
    const child = declared ?? (isObject(s.additionalProperties) ? s.additionalProperties : undefined);
    if (child) prune(x[key], child, [...path, key], unknown);
  }
}

const joinPath = (parts: string[]) => parts.reduce((p, part) => (part.startsWith('[') || !p ? p + part : `${p}.${part}`), '');

/** The schema of a member of an object: a declared property, else the map's value schema. */
const memberOf = (s: Schema | undefined, key: string): Schema | undefined =>
  s?.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : isObject(s?.additionalProperties) ? s.additionalProperties : undefined;

/** Drops nulls the schema forbids and cannot default (kube's PruneNonNullableNullsWithoutDefaults). */
function dropForbiddenNulls(x: unknown, s: Schema | undefined): void {
  if (Array.isArray(x)) x.forEach((item) => dropForbiddenNulls(item, s?.items));
  else if (isObject(x)) {
    for (const key of Object.keys(x)) {
      const child = memberOf(s, key);
      if (x[key] === null && child && !child.nullable && child.default === undefined) delete x[key];
      else dropForbiddenNulls(x[key], child);
    }
  }
}

const forbiddenNull = (v: unknown, s: Schema | undefined): boolean => v === null && s !== undefined && !s.nullable;

/** Fills in the schema's defaults in place (after dropping the nulls that have none). */
export function applySchemaDefaults(x: unknown, s: Schema | undefined): void {
  dropForbiddenNulls(x, s);
  fill(x, s);
}

function fill(x: unknown, s: Schema | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    x.forEach((item, i) => {
      if (forbiddenNull(item, s.items) && s.items?.default !== undefined) x[i] = cloneJson(s.items.default);
      fill(x[i], s.items);
    });
    return;
  }
  if (!isObject(x)) return;
  for (const [key, prop] of Object.entries(s.properties ?? {})) {
    if (prop.default === undefined) continue;
    if (x[key] === undefined || forbiddenNull(x[key], prop)) x[key] = cloneJson(prop.default);
  }
  for (const key of Object.keys(x)) {
    const declared = s.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
    if (declared) fill(x[key], declared);
    else if (isObject(s.additionalProperties)) {
      const values = s.additionalProperties;
      if (forbiddenNull(x[key], values) && values.default !== undefined) x[key] = cloneJson(values.default);
      fill(x[key], values);
    }
  }
}
