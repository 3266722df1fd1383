/**
 * A custom resource checked against its CRD's schema, as kube-apiserver's OpenAPI validator checks
 * it, every error with its field path and kube-openapi's words:
 *
 *   spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"
 *   spec.color: Unsupported value: "purple": supported values: "red", "green"
 *   spec.name: Too long: may not be more than 10 bytes
 *
 * Type, nullable, int-or-string, format, enum, length, pattern, bounds, item and property counts,
 * required, the list types' uniqueness (set, map keys), allOf/anyOf/oneOf/not. A value of the wrong
 * type is not looked into further. At the root, metadata is ObjectMeta (checked generically); only
 * the name and generateName rules a schema may give it apply.
 */
import { RE2JS } from 're2js';
import { FieldPath, duplicate, invalid, notSupported, required, tooMany, typeInvalid, type FieldError } from '../../api/field-errors.js';
import { isObject, jsonEqual } from '../../api/json-access.js';
import { validateObjectMeta } from '../metadata.js';
import type { Schema } from '../../api/schema.js';
import type { ObjectMeta } from '../../api/types.js';
import { fitsFormat } from './formats.js';

const jsonType = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v);

/** The path as kube-openapi names it inside its messages ("spec.replicas in body …"). */
const inBody = (p: FieldPath) => `${String(p)} in body`;

const patterns = new Map<string, RE2JS | undefined>();
function patternOf(p: string): RE2JS | undefined {
  if (!patterns.has(p)) {
    let re: RE2JS | undefined;
    try {
      re = RE2JS.compile(p);
    } catch {
      re = undefined; // refused when the CRD was written; never met here
    }
    if (patterns.size > 1000) patterns.clear();
    patterns.set(p, re);
  }
  return patterns.get(p);
}

/** The types a schema allows ([] for any), and whether a value has one of them. */
function typesOf(s: Schema): string[] {
  if (s['x-kubernetes-int-or-string']) return ['integer', 'string'];
  return s.type ? [s.type] : [];
}
const fitsType = (t: string, got: string) => t === got || (t === 'number' && got === 'integer');

/** Every error of value against schema, below path. root: the resource itself (its metadata is ObjectMeta). */
export function validateValue(value: unknown, schema: Schema, path: FieldPath, root = false): FieldError[] {
  const errs: FieldError[] = [];
  check(value, schema, path, errs, root);
  return errs;
}

function check(value: unknown, s: Schema, p: FieldPath, errs: FieldError[], root: boolean): void {
  if (value === undefined) return;
  const types = typesOf(s);
  const got = jsonType(value);
  if (value === null) {
    if (!s.nullable && types.length > 0) errs.push(typeInvalid(p, 'null', `${inBody(p)} must be of type ${types.join(',')}: "null"`));
    return;
  }
  if (types.length > 0 && !types.some((t) => fitsType(t, got))) {
    errs.push(typeInvalid(p, got, `${inBody(p)} must be of type ${types.join(',')}: ${JSON.stringify(got)}`));
    return;
  }
  if (s.enum && !s.enum.some((e) => jsonEqual(e, value))) {
    errs.push(
      notSupported(
        p,
        value,
        s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))),
      ),
    );
  }
  if (typeof value === 'string') checkString(value, s, p, errs);
  else if (typeof value === 'number') checkNumber(value, s, p, errs);
  else if (Array.isArray(value)) checkArray(value, s, p, errs);
  else if (isObject(value)) checkObject(value, s, p, errs, root);
  checkComposition(value, s, p, errs);
}

function checkString(v: string, s: Schema, p: FieldPath, errs: FieldError[]): void {
  if (s.format && !fitsFormat(s.format, v)) errs.push(invalid(p, v, `${inBody(p)} must be of type ${s.format}: ${JSON.stringify(v)}`));
  const length = [...v].length;
  if (s.maxLength !== undefined && length > s.maxLength) errs.push({ type: 'FieldValueTooLong', field: String(p), detail: `may not be more than ${s.maxLength} bytes` });
  if (s.minLength !== undefined && length < s.minLength) errs.push(invalid(p, v, `${inBody(p)} should be at least ${s.minLength} chars long`));
  if (s.pattern !== undefined && !patternOf(s.pattern)?.test(v)) errs.push(invalid(p, v, `${inBody(p)} should match '${s.pattern}'`));
}

function checkNumber(v: number, s: Schema, p: FieldPath, errs: FieldError[]): void {
  if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
    errs.push(invalid(p, v, `${inBody(p)} should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`));
  }
  if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
    errs.push(invalid(p, v, `${inBody(p)} should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`));
  }
  if (s.multipleOf !== undefined && s.multipleOf > 0 && !Number.isInteger(Number((v / s.multipleOf).toPrecision(12)))) {
    errs.push(invalid(p, v, `${inBody(p)} should be a multiple of ${s.multipleOf}`));
  }
  if (s.type === 'integer' && s.format === 'int32' && (v < -(2 ** 31) || v > 2 ** 31 - 1)) errs.push(invalid(p, v, `${inBody(p)} must be of type int32: "${v}"`));
}

function checkArray(v: unknown[], s: Schema, p: FieldPath, errs: FieldError[]): void {
  if (s.maxItems !== undefined && v.length > s.maxItems) errs.push(tooMany(p, v.length, s.maxItems));
  if (s.minItems !== undefined && v.length < s.minItems) errs.push(invalid(p, v.length, `${inBody(p)} should have at least ${s.minItems} items`));
  if (s.items) v.forEach((item, i) => check(item, s.items!, p.index(i), errs, false));
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    v.forEach((item, i) => {
      if (v.slice(0, i).some((earlier) => jsonEqual(earlier, item))) errs.push(duplicate(p.index(i), goMap(item)));
    });
  } else if (listType === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen: unknown[] = [];
    v.forEach((item, i) => {
      if (!isObject(item)) return;
      const key = Object.fromEntries(keys.filter((k) => item[k] !== undefined).map((k) => [k, item[k]]));
      if (seen.some((earlier) => jsonEqual(earlier, key))) errs.push(duplicate(p.index(i), goMap(key)));
      seen.push(key);
    });
  }
}

function checkObject(v: Record<string, unknown>, s: Schema, p: FieldPath, errs: FieldError[], root: boolean): void {
  const count = Object.keys(v).length;
  if (s.maxProperties !== undefined && count > s.maxProperties) errs.push({ ...tooMany(p, count, s.maxProperties), detail: `must have at most ${s.maxProperties} properties` });
  if (s.minProperties !== undefined && count < s.minProperties) errs.push(invalid(p, count, `${inBody(p)} should have at least ${s.minProperties} properties`));
  for (const name of s.required ?? []) if (v[name] === undefined) errs.push(required(p.child(name), ''));
  for (const [key, item] of Object.entries(v)) {
    if (root && (key === 'apiVersion' || key === 'kind')) continue;
    if (root && key === 'metadata') {
      const meta = s.properties?.metadata;
      if (meta && isObject(item)) for (const f of ['name', 'generateName'] as const) if (meta.properties?.[f]) check(item[f], meta.properties[f], p.child('metadata', f), errs, false);
      continue;
    }
    const declared = s.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
    if (declared) check(item, declared, p.child(key), errs, false);
    else if (s.additionalProperties) check(item, s.additionalProperties, p.child(key), errs, false);
  }
  if (s['x-kubernetes-embedded-resource']) errs.push(...embeddedResourceErrors(v, p));
}

/**
 * An embedded resource names its apiVersion and kind, and its metadata is ObjectMeta, checked as
 * kube-apiserver checks it: names as path segments (no name is needed), a namespace only when given,
 * labels, annotations, owner references, finalizers.
 */
function embeddedResourceErrors(v: Record<string, unknown>, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ['apiVersion', 'kind'] as const) {
    const value = v[key];
    if (value === undefined) errs.push(required(p.child(key), ''));
    else if (typeof value !== 'string') errs.push(invalid(p.child(key), value, 'must be a string'));
    else if (value === '') errs.push(invalid(p.child(key), value, 'must not be empty'));
  }
  const meta = v.metadata;
  if (meta === undefined) return errs;
  if (!isObject(meta)) return [...errs, invalid(p.child('metadata'), meta, 'must be an object')];
  const named = { ...meta, name: typeof meta.name === 'string' && meta.name !== '' ? meta.name : 'fakename' } as ObjectMeta;
  return [...errs, ...validateObjectMeta(named, typeof meta.namespace === 'string' && meta.namespace !== '', 'path-segment', p.child('metadata'))];
}

/**
 * allOf, anyOf, oneOf and not: value rules only (a structural schema declares types outside them).
 * A failed composition is kube-openapi's composite error, which kube-apiserver reports on no field
 * (`<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found none
 * valid`), followed by the errors of the alternative that came closest (kube-openapi's best
 * failures: here the one with the fewest errors, the first of them on a tie).
 */
function checkComposition(value: unknown, s: Schema, p: FieldPath, errs: FieldError[]): void {
  const at = JSON.stringify(String(p));
  if (s.anyOf) {
    const results = s.anyOf.map((sub) => validateValue(value, sub, p));
    if (!results.some((r) => r.length === 0)) errs.push(composite(`${at} must validate at least one schema (anyOf)`), ...closest(results));
  }
  if (s.oneOf) {
    const results = s.oneOf.map((sub) => validateValue(value, sub, p));
    const valid = results.filter((r) => r.length === 0).length;
    if (valid === 0) errs.push(composite(`${at} must validate one and only one schema (oneOf). Found none valid`), ...closest(results));
    else if (valid > 1) errs.push(composite(`${at} must validate one and only one schema (oneOf). Found ${valid} valid alternatives`));
  }
  if (s.allOf) {
    const results = s.allOf.map((sub) => validateValue(value, sub, p));
    for (const r of results) errs.push(...r);
    const valid = results.filter((r) => r.length === 0).length;
    if (valid !== results.length) errs.push(composite(`${at} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`));
  }
  if (s.not && validateValue(value, s.not, p).length === 0) errs.push(composite(`${at} must not validate the schema (not)`));
}

const composite = (detail: string): FieldError => ({ type: 'FieldValueInvalid', field: '<nil>', value: '', detail });

function closest(results: FieldError[][]): FieldError[] {
  return results.reduce((best, r) => (r.length < best.length ? r : best));
}

/** A value as Go holds a decoded JSON map: json.Marshal prints its keys sorted. */
function goMap(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(goMap);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, goMap(v[k])]),
  );
}
