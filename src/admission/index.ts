/** Admission on the write path: the hook the object store calls, and the per-request context it reads. */
import type { KindStrategy } from '../resources/strategy.js';
import type { Store } from '../store/store.js';
import { ValidatingAdmission } from './validating-admission.js';

export { runWithAdmissionContext, currentAdmissionContext, type AdmissionRequestContext } from './request-context.js';
export { ValidatingAdmission } from './validating-admission.js';

/** The admit hook for a server serving these kinds; undefined when the policy kinds are not served. */
export function admissionFor(store: Store, kinds: readonly KindStrategy[]): ValidatingAdmission['admit'] | undefined {
  const served = (k: string) => kinds.some((x) => x.kind === k && x.group === 'admissionregistration.orch.io');
  if (!served('ValidatingAdmissionPolicy') || !served('ValidatingAdmissionPolicyBinding')) return undefined;
  return new ValidatingAdmission(store, kinds).admit;
}
