import { numberAt, objectAt } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { Logger } from '../observability/logger.js';
import type { Registry } from '../registry/registry.js';
import { isRegistryError, notFound } from '../registry/errors.js';
import { qualified } from '../api/qualified.js';
import { defer, filter, from, map, merge, mergeMap } from 'rxjs';
import { coalesce, runSerially } from './work-queue.js';

/**
 * Kubernetes' ValidatingAdmissionPolicy status controller: each policy whose generation is newer
 * than its status.observedGeneration is type-checked against the kinds it matches, and
 * status.typeChecking.expressionWarnings and status.observedGeneration are written through /status
 * as the system user. status.conditions are kept as they are: Kubernetes' controller writes none.
 * A policy already observed at its generation is not written again, so the controller's own status
 * write (same generation) ends the loop.
 */
/** A policy's type-checking warnings against the kinds it matches (src/admission's checker, handed in by the composition root). */
export type PolicyTypeCheck = (policy: KubeObject, kinds: readonly KindStrategy[]) => { fieldRef: string; warning: string }[];

export function startPolicyStatus(objects: Registry, kinds: readonly KindStrategy[], typeCheckPolicy: PolicyTypeCheck, log: Logger): () => void {
  const kind = kinds.find((k) => k.group === 'admissionregistration.orch.io' && k.kind === 'ValidatingAdmissionPolicy');
  if (!kind) return () => {};
  const stale = (o: KubeObject) => (o.metadata.generation ?? 1) > (numberAt(objectAt(o, 'status'), 'observedGeneration') ?? 0);

  const withStatus = (cur: KubeObject | undefined, name: string): KubeObject => {
    if (!cur) throw notFound(qualified(kind, name));
    if (!stale(cur)) return cur;
    const warnings = typeCheckPolicy(cur, kinds);
    // Kubernetes' apply of an empty warning list leaves typeChecking present and empty: checked, nothing found.
    const typeChecking = warnings.length ? { expressionWarnings: warnings } : {};
    return { ...cur, status: { ...objectAt(cur, 'status'), observedGeneration: cur.metadata.generation ?? 1, typeChecking } };
  };

  const check = async (name: string) => {
    await objects
      .update(kind, undefined, name, (cur) => withStatus(cur, name), { dryRun: false, subresource: 'status' })
      .catch((err: unknown) => {
        // Deleted meanwhile: nothing to report on.
        if (!isRegistryError(err, 'NotFound')) throw err;
      });
  };

  const stalePolicies = merge(
    // Policies written while no controller ran (before a restart, or during the log replay).
    defer(() => from(objects.list(kind, undefined))).pipe(map((s) => s.obj)),
    objects.changes(kind).pipe(
      mergeMap((batch) => batch.filter((c) => c.type !== 'DELETED')),
      map((c) => c.cur.obj),
    ),
  ).pipe(
    filter(stale),
    map((o) => o.metadata.name ?? ''),
    coalesce(),
  );
  const sub = runSerially('validating admission policy status', log, stalePolicies, check);
  return () => sub.unsubscribe();
}
