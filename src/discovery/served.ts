/**
 * A document encoded once and served as bytes: discovery and OpenAPI are fetched by every kubectl
 * command, so they are serialized and hashed when first asked for and never again.
 */
import { createHash } from 'node:crypto';
import { revisionOf } from '../api/kind-revisions.js';
import type { KindStrategy } from '../api/strategy.js';

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
 * Memoizes a builder per list of kinds: each document is built on first request and then shared,
 * until the list changes (a CRD's kind defined or removed moves its revision).
 */
export function perRegistry<T>(build: (kinds: readonly KindStrategy[]) => T): (kinds: readonly KindStrategy[]) => T {
  const cache = new WeakMap<readonly KindStrategy[], { revision: number; value: T }>();
  return (kinds) => {
    const revision = revisionOf(kinds);
    let entry = cache.get(kinds);
    if (entry === undefined || entry.revision !== revision) cache.set(kinds, (entry = { revision, value: build(kinds) }));
    return entry.value;
  };
}
