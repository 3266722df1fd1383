/**
 * RBAC escalation prevention on the write path: wraps the admission hooks so that, after mutating
 * admission and before validation (where Kubernetes' RBAC storage checks it), a create or update of
 * a Role, ClusterRole, RoleBinding or ClusterRoleBinding is refused with 403 when it would grant the
 * writer more than they hold (src/auth/rbac-escalation.ts). An update that only touches what garbage
 * collection writes (owner references, finalizers) is not checked, so cleanup is never blocked.
 *
 * Install it only when RBAC is one of the server's authorizers: under AlwaysAllow nobody holds any
 * RBAC permission, and every role write would be refused.
 */
import { currentAdmissionContext, type AdmissionHooks } from '../admission/index.js';
import type { EscalationRefusal, EscalationRequest } from '../auth/rbac-escalation.js';
import { clusterRoleBinding } from '../resources/cluster-role-binding.js';
import { clusterRole } from '../resources/cluster-role.js';
import { isSet, jsonEqual, objectAt, stringAt } from '../api/json-access.js';
import { roleBinding } from '../resources/role-binding.js';
import { role } from '../resources/role.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { policyRulesOf } from './rbac-source.js';
import { forbidden, notFound } from './errors.js';
import { qualified } from '../api/qualified.js';

export type EscalationCheck = (req: EscalationRequest) => Promise<EscalationRefusal | undefined>;

const CHECKED = new Map<KindStrategy, EscalationRequest['kind']>([
  [role, 'Role'],
  [clusterRole, 'ClusterRole'],
  [roleBinding, 'RoleBinding'],
  [clusterRoleBinding, 'ClusterRoleBinding'],
]);

/** Kubernetes' IsOnlyMutatingGCFields: equal once owner references, finalizers and bookkeeping are taken from old. */
function onlyGarbageCollectionFields(next: KubeObject, old: KubeObject): boolean {
  const { ownerReferences, finalizers, managedFields, resourceVersion, generation } = old.metadata;
  return jsonEqual({ ...next, metadata: { ...next.metadata, ownerReferences, finalizers, managedFields, resourceVersion, generation } }, old);
}

function requestOf(kind: EscalationRequest['kind'], obj: KubeObject): EscalationRequest {
  const base = { user: currentAdmissionContext().user, kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
  if (kind === 'Role' || kind === 'ClusterRole') {
    return { ...base, rules: policyRulesOf(obj), aggregates: isSet(obj, 'aggregationRule') };
  }
  const ref = objectAt(obj, 'roleRef');
  return { ...base, roleRef: { kind: stringAt(ref, 'kind'), name: stringAt(ref, 'name') } };
}

export function withRbacEscalationPrevention(inner: AdmissionHooks | undefined, check: EscalationCheck): AdmissionHooks {
  return {
    mutate(op, kind, obj, old, opts) {
      const checked = CHECKED.get(kind);
      const mutated = inner ? inner.mutate(op, kind, obj, old, opts) : obj;
      // A kind RBAC does not check passes through as inner answered it (at once when nothing ran).
      if (!checked || (op !== 'CREATE' && op !== 'UPDATE')) return mutated;
      return (async () => {
        const next = await mutated;
        if (old && onlyGarbageCollectionFields(next, old)) return next;
        const refusal = await check(requestOf(checked, next));
        if (refusal?.reason === 'Forbidden') throw forbidden(qualified(kind, next.metadata.name ?? ''), refusal.detail);
        if (refusal?.reason === 'RoleNotFound') throw notFound(qualified(refusal.kind === 'Role' ? role : clusterRole, refusal.name));
        return next;
      })();
    },
    validate: (op, kind, obj, old, opts) => inner?.validate(op, kind, obj, old, opts),
  };
}
