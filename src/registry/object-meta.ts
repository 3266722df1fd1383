/**
 * What the system sets and compares on an object's way to storage, the same for every kind: its
 * timestamps, generated names, generation, the fields an update keeps from the stored object, and the
 * garbage collector's finalizers a delete asks for.
 */
import { cloneJson, jsonEqual } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

/** Timestamps as Kubernetes writes metav1.Time: RFC 3339, whole seconds, UTC. */
export function rfc3339(d: Date): string {
  const second = Math.floor(d.getTime() / 1000);
  if (second !== lastSecond.second) lastSecond = { second, text: d.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  return lastSecond.text;
}

/** Every write of a second stamps the same text: made once per second (toISOString and its regex showed in a create's profile). */
let lastSecond = { second: NaN, text: '' };

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
/** The five characters generateName is completed with, as Kubernetes draws them. */
export const randomSuffix = (): string => Array.from({ length: 5 }, () => NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)]).join('');

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

/** A write of the main resource: system fields and status come from the stored object. */
export function mainUpdate(kind: KindStrategy, old: KubeObject, obj: KubeObject): KubeObject {
  const m = obj.metadata;
  const o = old.metadata;
  // System fields come from the stored object; an attempt to change them is caught by validation.
  m.uid ??= o.uid;
  // Kubernetes ignores a changed creationTimestamp rather than refusing it: typed clients (client-node)
  // send it back re-serialized with milliseconds.
  if (o.creationTimestamp) m.creationTimestamp = o.creationTimestamp;
  m.generation = o.generation;
  if (o.deletionTimestamp) {
    m.deletionTimestamp = o.deletionTimestamp;
    m.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
  } else {
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
  }
  m.namespace = o.namespace;
  if (m.namespace === undefined) delete m.namespace;
  if (kind.hasStatus) {
    if (old.status !== undefined) obj.status = old.status;
    else delete obj.status;
  }
  return obj;
}

/** A write of /status: everything but status (and who wrote it) comes from the stored object. */
export function statusUpdate(old: KubeObject, obj: KubeObject): KubeObject {
  const next = cloneJson(old);
  if (obj.status !== undefined) next.status = obj.status;
  else delete next.status;
  // managedFields record the /status writer too (computed from old by the field manager).
  if (obj.metadata.managedFields !== undefined) next.metadata.managedFields = obj.metadata.managedFields;
  return next;
}

/**
 * The garbage collector's finalizers, as DeleteOptions set them: Orphan (or orphanDependents=true)
 * adds `orphan`, Foreground adds `foregroundDeletion`, Background (or orphanDependents=false) removes
 * `orphan`.
 */
export function gcFinalizers(current: string[], opts: { propagationPolicy?: 'Orphan' | 'Background' | 'Foreground'; orphanDependents?: boolean }): string[] {
  const set = new Set(current);
  const policy = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : opts.orphanDependents === false ? 'Background' : undefined);
  if (policy === 'Orphan') set.add('orphan');
  if (policy === 'Foreground') set.add('foregroundDeletion');
  if (policy === 'Background') set.delete('orphan');
  return [...set];
}
