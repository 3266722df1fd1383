/**
 * A document encoded once and served as bytes: discovery and OpenAPI are fetched by every kubectl
 * command, so they are serialized and hashed when first asked for and never again.
 */
import { createHash } from 'node:crypto';

export interface Served {
  /** The encoded answer (JSON text, or protobuf bytes). */
  body: string | Uint8Array;
  /** The exact Content-Type header to send. */
  contentType: string;
  /** Unquoted entity tag; send it as `ETag: "<etag>"`. */
  etag: string;
}

/**
 * The hash Kubernetes uses for OpenAPI and aggregated discovery ETags and for the `?hash=` of
 * /openapi/v3 links: SHA-512 of the bytes, upper-case hex. Equal documents give equal hashes across
 * runs and replicas, so a client's disk cache stays valid after a restart.
 */
export function etag(body: string | Uint8Array): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

export const served = (body: string | Uint8Array, contentType: string): Served => ({ body, contentType, etag: etag(body) });

/**
 * Whether an If-None-Match header names this entity (→ answer 304). Accepts `*`, a list, and weak
 * tags (`W/"…"`), which If-None-Match compares weakly (RFC 9110 §13.1.2).
 */
export function notModified(ifNoneMatch: string | undefined, tag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === `"${tag}"`);
}

/**
 * Memoizes a builder per registry array: the registry is fixed once the server starts, so each
 * document is built on first request and then shared. (Kinds added to the same array later are not
 * seen; build a new array instead.)
 */
export function perRegistry<K extends object, T>(build: (kinds: K) => T): (kinds: K) => T {
  const cache = new WeakMap<K, T>();
  return (kinds) => {
    let value = cache.get(kinds);
    if (value === undefined) {
      value = build(kinds);
      cache.set(kinds, value);
    }
    return value;
  };
}
