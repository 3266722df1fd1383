/**
 * Checks shared by the configuration kinds, worded as kube-apiserver words them. Each returns field
 * errors (empty when the value passes) so readers collect every problem of a file, not the first.
 */
import { statSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { parseDuration } from './duration.js';
import { FieldPath, invalid, required, type FieldError } from '../api/field-errors.js';
import { isObject, type JsonObject } from '../api/json-access.js';
import { isDNS1123Subdomain, regexError } from '../api/field-errors.js';

/** A string field, or undefined when absent, null or (after the type check) not a string. */
export const optString = (o: JsonObject | undefined, key: string): string | undefined => {
  const v = o?.[key];
  return typeof v === 'string' ? v : undefined;
};
/** A string field read as Go reads it into a plain string: absent is ''. */
export const stringOf = (o: JsonObject | undefined, key: string): string => optString(o, key) ?? '';
export const optBool = (o: JsonObject | undefined, key: string): boolean | undefined => {
  const v = o?.[key];
  return typeof v === 'boolean' ? v : undefined;
};
export const optNumber = (o: JsonObject | undefined, key: string): number | undefined => {
  const v = o?.[key];
  return typeof v === 'number' ? v : undefined;
};
export const objectOf = (o: JsonObject | undefined, key: string): JsonObject | undefined => {
  const v = o?.[key];
  return isObject(v) ? v : undefined;
};
/** The object items of a list field ([] when absent); non-objects were reported by the type check. */
export const objectsOf = (o: JsonObject | undefined, key: string): JsonObject[] => {
  const v = o?.[key];
  return Array.isArray(v) ? v.map((item) => (isObject(item) ? item : {})) : [];
};
export const stringsOf = (o: JsonObject | undefined, key: string): string[] => {
  const v = o?.[key];
  return Array.isArray(v) ? v.map((item) => (typeof item === 'string' ? item : '')) : [];
};

/**
 * A metav1.Duration field in milliseconds: undefined when absent (Go's zero), and a field error for
 * text time.ParseDuration would refuse.
 */
export function durationOf(o: JsonObject | undefined, key: string, path: FieldPath, errs: FieldError[]): number | undefined {
  const text = optString(o, key);
  if (text === undefined) return undefined;
  try {
    return Math.round(parseDuration(text) * 1000);
  } catch (e) {
    errs.push(invalid(path, text, (e as Error).message));
    return undefined;
  }
}

/** Go's Duration.String() for whole milliseconds, for messages: 45000 → "45s", 90000 → "1m30s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = rest / 1000;
  if (h === 0 && m === 0 && s < 1) return `${sign}${rest}ms`;
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

/** An issuer or discovery URL: https, no user information, no query, no fragment. */
export function httpsURLErrors(value: string, path: FieldPath): FieldError[] {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return [invalid(path, value, `parse ${JSON.stringify(value)}: invalid URL`)];
  }
  const errs: FieldError[] = [];
  if (u.protocol !== 'https:') errs.push(invalid(path, value, 'URL scheme must be https'));
  if (u.username || u.password) errs.push(invalid(path, value, 'URL must not contain a username or password'));
  if (u.search.length > 1) errs.push(invalid(path, value, 'URL must not contain a query'));
  if (u.hash.length > 1) errs.push(invalid(path, value, 'URL must not contain a fragment'));
  return errs;
}

/** PEM text that must hold at least one X.509 certificate; the value is omitted from messages. */
export function certificateAuthorityErrors(pem: string, path: FieldPath): FieldError[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return [invalid(path, '<omitted>', 'data does not contain any valid RSA or ECDSA certificates')];
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (e) {
      return [invalid(path, '<omitted>', `invalid certificate: ${(e as Error).message}`)];
    }
  }
  return [];
}

const httpPathFmt = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const httpPathRe = new RegExp(`^${httpPathFmt}$`);

/** A domain-prefixed path such as `acme.io/foo` (apimachinery's IsDomainPrefixedPath). */
export function domainPrefixedPathErrors(value: string, path: FieldPath): FieldError[] {
  if (value === '') return [required(path)];
  const slash = value.indexOf('/');
  const host = slash < 0 ? '' : value.slice(0, slash);
  const rest = slash < 0 ? '' : value.slice(slash + 1);
  if (host === '' || rest === '') return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((m) => invalid(path, host, m));
  if (!httpPathRe.test(rest)) errs.push(invalid(path, rest, regexError('Invalid path', httpPathFmt)));
  return errs;
}

/** A file the server will read later: it must exist now (symlinks followed). */
export function existingFileErrors(file: string, path: FieldPath, detail: string): FieldError[] {
  try {
    statSync(file);
    return [];
  } catch {
    return [invalid(path, file, detail)];
  }
}

/** An absolute path to a regular file (the webhook client connection file). */
export function regularFileErrors(file: string, path: FieldPath): FieldError[] {
  if (!isAbsolute(file)) return [invalid(path, file, 'must be an absolute path')];
  try {
    if (!statSync(file).isFile()) return [invalid(path, file, 'must be a regular file')];
    return [];
  } catch (e) {
    return [invalid(path, file, `error loading file: ${(e as Error).message}`)];
  }
}

/** Collects values and reports the second and later occurrence of each as a duplicate. */
export class Seen {
  private readonly values = new Set<string>();
  /** True when value was seen before; records it otherwise. */
  repeat(value: string): boolean {
    if (this.values.has(value)) return true;
    this.values.add(value);
    return false;
  }
}
