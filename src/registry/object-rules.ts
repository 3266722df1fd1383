/**
 * The rules of a write that need nothing but the objects: generated names, timestamps, what counts
 * as a spec change and as no change, and the finalizers a delete's options ask for.
 */
import type { KindStrategy } from '../resources/strategy.js';
import type { KubeObject } from '../resources/types.js';
import { jsonEqual } from '../resources/json-access.js';
import type { DeleteOptions } from './object-store.js';

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
export const randomSuffix = (): string => Array.from({ length: 5 }, () => NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)]).join('');

/** Timestamps as Kubernetes writes metav1.Time: RFC 3339, whole seconds, UTC. */
export function rfc3339(d: Date): string {
  const second = Math.floor(d.getTime() / 1000);
  if (second !== lastSecond.second) lastSecond = { second, text: d.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  return lastSecond.text;
}

/** Every write of a second stamps the same text: made once per second (toISOString and its regex showed in a create's profile). */
let lastSecond = { second: NaN, text: '' };

/**
 * What decides generation: everything but metadata, and but status where status is a subresource
 * (a spec change in Kubernetes' terms; a custom resource without one counts its status too).
 */
export function specOf(kind: KindStrategy, o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status, apiVersion: _a, kind: _k, ...rest } = o;
  return kind.hasStatus || status === undefined ? rest : { ...rest, status };
}

/**
 * Equal but for the fields every write rewrites: a no-op update is not written (Kubernetes skips it).
 * Compared as values, not as text: the same object with its keys in another order is the same.
 */
export function sameObject(a: KubeObject, b: KubeObject): boolean {
  // managedFields count: a new owner of unchanged fields is a change (their times only move on real changes).
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return jsonEqual(strip(a), strip(b));
}

/**
 * The garbage collector's finalizers, as DeleteOptions set them: Orphan (or orphanDependents=true)
 * adds `orphan`, Foreground adds `foregroundDeletion`, Background (or orphanDependents=false) removes
 * `orphan`.
 */
export function gcFinalizers(current: string[], opts: DeleteOptions): string[] {
  const set = new Set(current);
  const policy = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : opts.orphanDependents === false ? 'Background' : undefined);
  if (policy === 'Orphan') set.add('orphan');
  if (policy === 'Foreground') set.add('foregroundDeletion');
  if (policy === 'Background') set.delete('orphan');
  return [...set];
}
