/**
 * The field manager: who set which field of an object (metadata.managedFields). Every write but an
 * apply is an Update by its manager; an apply takes ownership of what its configuration sets and
 * reports conflicts (the algorithms are src/patch's; this is where a write's scope is decided).
 */
import { applyConfig, recordUpdate, type WriteScope } from '../patch/managed-fields.js';
import { apiVersionOf, type KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { rfc3339 } from './object-meta.js';

/** What a write is: the kind and version it was made through, and the subresource (status) if any. */
export interface WriteTarget {
  kind: KindStrategy;
  version: string;
  subresource?: 'status';
  /** When the write is made: the registry's clock, so managedFields' times agree with the object's timestamps. */
  at: Date;
}

/** Kubernetes' default field manager: the User-Agent up to its first '/' (`kubectl/v1.33.1 (…)` → `kubectl`). */
export const managerFromUserAgent = (userAgent: string | undefined): string => (userAgent ?? '').split('/', 1)[0];

export function writeScope(t: WriteTarget): WriteScope {
  return {
    schema: t.kind.schema,
    apiVersion: apiVersionOf(t.kind, t.version),
    ...(t.subresource ? { subresource: t.subresource } : {}),
    hasStatus: t.kind.hasStatus,
    now: rfc3339(t.at),
  };
}

/**
 * Records an Update by manager on `next` (in place): defaults are applied first, so the manager owns
 * what defaulting filled in, as in Kubernetes where decoding defaults the body.
 */
export function trackUpdate(t: WriteTarget, live: KubeObject | undefined, next: KubeObject, manager: string): void {
  if (t.subresource !== 'status') t.kind.applyDefaults(next);
  const managed = recordUpdate(live, next, manager, writeScope(t));
  if (managed === undefined || managed.length === 0) delete next.metadata.managedFields;
  else next.metadata.managedFields = managed;
}

/** A server-side apply of config by manager on the live object: the object and its managedFields. */
export function trackApply(t: WriteTarget, live: KubeObject | undefined, config: KubeObject, manager: string, force: boolean): KubeObject {
  const { obj, managedFields } = applyConfig(live, config, manager, force, writeScope(t));
  obj.metadata.managedFields = managedFields;
  return obj;
}
