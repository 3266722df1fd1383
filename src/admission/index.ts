/** Admission on the write path: the hooks the object store calls, and the per-request context they read. */
import type { Authorizer } from '../auth/authorizer.js';
import type { KindStrategy } from '../resources/strategy.js';
import type { Store } from '../store/store.js';
import { admissionAttributes, type AdmissionOptions } from './attributes.js';
import type { Operation } from './matching.js';
import type { KubeObject } from '../resources/types.js';
import { runMutatingPlugins, type MutatingPlugin } from './mutation.js';
import { currentAdmissionContext } from './request-context.js';
import { ValidatingAdmission } from './validating-admission.js';

export { runWithAdmissionContext, currentAdmissionContext, type AdmissionRequestContext } from './request-context.js';
export { ValidatingAdmission } from './validating-admission.js';

/**
 * Admission on the object store's write path, in Kubernetes' order: mutate runs after defaulting
 * and before validation (the store defaults its result again, as a decoded webhook patch is),
 * validate after validation, just before the write. Both throw an ApiError to refuse the request.
 */
export interface AdmissionHooks {
  mutate(op: Exclude<Operation, 'CONNECT'>, kind: KindStrategy, obj: KubeObject, old: KubeObject | undefined, opts: AdmissionOptions): Promise<KubeObject>;
  validate(op: Exclude<Operation, 'CONNECT'>, kind: KindStrategy, obj: KubeObject, old: KubeObject | undefined, opts: AdmissionOptions): Promise<void>;
}

/**
 * The admission hooks for a server serving these kinds; undefined when no admission kinds are
 * served. The authorizer answers the `authorizer` variable of their expressions.
 */
export function admissionFor(store: Store, kinds: readonly KindStrategy[], authorizer?: Authorizer): AdmissionHooks | undefined {
  const served = (k: string) => kinds.some((x) => x.kind === k && x.group === 'admissionregistration.orch.io');
  const validating = served('ValidatingAdmissionPolicy') && served('ValidatingAdmissionPolicyBinding') ? new ValidatingAdmission(store, kinds, authorizer) : undefined;
  const mutating: MutatingPlugin[] = [];
  if (!validating && mutating.length === 0) return undefined;
  const namespaceKind = kinds.find((k) => k.group === '' && k.kind === 'Namespace');
  const attributes = (...[op, kind, obj, old, opts]: Parameters<AdmissionHooks['mutate']>) =>
    admissionAttributes(store, namespaceKind, op, kind, obj, old, currentAdmissionContext().user, opts);
  return {
    mutate: async (op, kind, obj, old, opts) => (mutating.length === 0 ? obj : runMutatingPlugins(mutating, attributes(op, kind, obj, old, opts), obj)),
    validate: async (op, kind, obj, old, opts) => validating?.validate(attributes(op, kind, obj, old, opts)),
  };
}
