/**
 * What ConfigMaps and Secrets share: keys that name files (Kubernetes' IsConfigMapKey), values as
 * base64 where bytes are stored, a total size bound, and `immutable`, after which the data may not
 * change and the flag may not be unset.
 */
import { FieldPath, forbidden, invalid, tooLong, type FieldError } from '../api/field-errors.js';
import { byteLength, isObject, jsonEqual, type JsonObject } from '../api/json-access.js';
import { maxLenError, regexError, DNS1123_SUBDOMAIN_MAX } from '../api/name-formats.js';
import type { KubeObject } from '../api/types.js';

/** The most data a ConfigMap or Secret holds (core.MaxSecretSize), in bytes. */
export const MAX_DATA_SIZE = 1024 * 1024;
const KEY_FORMAT = '[-._a-zA-Z0-9]+';
const KEY_RE = new RegExp(`^${KEY_FORMAT}$`);
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const IMMUTABLE = 'field is immutable when `immutable` is set';

/** Why a key may not name a file of a volume (Kubernetes' IsConfigMapKey), or nothing. */
export function isConfigMapKey(key: string): string[] {
  const errs: string[] = [];
  if (key.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!KEY_RE.test(key)) errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", KEY_FORMAT, 'key.name', 'KEY_NAME', 'key-name'));
  if (key === '.') errs.push("must not be '.'");
  else if (key === '..') errs.push("must not be '..'");
  else if (key.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export const mapAt = (o: KubeObject, field: string): JsonObject => (isObject(o[field]) ? (o[field] as JsonObject) : {});

/** The bytes a base64 value stands for, or undefined when it is not base64 (Go's StdEncoding). */
export const base64Bytes = (v: unknown): number | undefined => (typeof v === 'string' && BASE64_RE.test(v) ? Buffer.from(v, 'base64').length : undefined);

/**
 * Keys and values of one map: each key a config key, each value base64 when binary (kube-apiserver
 * refuses bad base64 when it decodes the body, a 400; here it is the field's 422). Returns the bytes held.
 */
export function validateDataMap(data: JsonObject, path: FieldPath, binary: boolean, errs: FieldError[]): number {
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    errs.push(...isConfigMapKey(key).map((m) => invalid(path.key(key), key, m)));
    if (!binary) {
      size += byteLength(typeof value === 'string' ? value : '');
      continue;
    }
    const bytes = base64Bytes(value);
    if (bytes === undefined) errs.push(invalid(path.key(key), '<secret contents redacted>', 'illegal base64 data'));
    size += bytes ?? 0;
  }
  return size;
}

export const tooMuchData = (path: FieldPath): FieldError => tooLong(path, undefined, MAX_DATA_SIZE);

/** An update of an immutable object: the flag stays, and so do the maps. */
export function validateImmutableData(o: KubeObject, old: KubeObject, fields: readonly string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (o.immutable !== true) errs.push(forbidden(FieldPath.root('immutable'), IMMUTABLE));
  for (const f of fields) if (!jsonEqual(o[f] ?? {}, old[f] ?? {})) errs.push(forbidden(FieldPath.root(f), IMMUTABLE));
  return errs;
}
