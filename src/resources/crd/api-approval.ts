/**
 * The API review of protected groups (KEP 1111, apiextensions-apiserver's apihelpers): a CRD in a
 * group the Kubernetes community owns (`k8s.io`, `kubernetes.io` and their subdomains; here
 * `orch.io`'s too, the groups orchd serves its own kinds in) must say in its
 * `api-approved.kubernetes.io` annotation where its API was approved (a URL), or that it was not
 * (`unapproved, …`). Its KubernetesAPIApprovalPolicyConformant condition reports which.
 */
import { FieldPath, invalid, required, type FieldError } from '../../api/field-errors.js';
import { objectAt, stringAt } from '../../api/json-access.js';
import type { CrdCondition } from '../../api/served-kinds.js';
import type { KubeObject } from '../../api/types.js';

export const API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';
const KEP = 'see https://github.com/kubernetes/enhancements/pull/1111';
const PROTECTED = ['k8s.io', 'kubernetes.io', 'orch.io'];

type State = 'Missing' | 'Bypassed' | 'Approved' | 'Invalid';

export function isProtectedGroup(group: string): boolean {
  return PROTECTED.some((d) => group === d || group.endsWith(`.${d}`));
}

function approvalOf(crd: KubeObject): { state: State; reason: string; value: string } {
  const value = crd.metadata.annotations?.[API_APPROVED_ANNOTATION] ?? '';
  if (value === '') return { state: 'Missing', value, reason: `protected groups must have approval annotation "${API_APPROVED_ANNOTATION}", ${KEP}` };
  if (value.startsWith('unapproved')) return { state: 'Bypassed', value, reason: `not approved: "${value}"` };
  if (isRequestUri(value)) return { state: 'Approved', value, reason: `approved in ${value}` };
  return { state: 'Invalid', value, reason: `protected groups must have approval annotation "${API_APPROVED_ANNOTATION}" with either a URL or a reason starting with "unapproved", ${KEP}` };
}

/** Go's url.ParseRequestURI with a scheme and a host, which is what Kubernetes takes for a URL. */
function isRequestUri(s: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\s]+/.test(s)) return false;
  try {
    const u = new URL(s);
    return u.host !== '' && u.protocol !== '';
  } catch {
    return false;
  }
}

/** The errors of a write: none outside protected groups, nor when the approval state did not change. */
export function validateApiApproval(crd: KubeObject, old?: KubeObject): FieldError[] {
  if (!isProtectedGroup(stringAt(objectAt(crd, 'spec'), 'group'))) return [];
  const now = approvalOf(crd);
  // A controller that rewrites its CRD's spec, leaving the annotation as it was, is never refused.
  if (old && approvalOf(old).state === now.state) return [];
  const p = FieldPath.root('metadata').child('annotations').key(API_APPROVED_ANNOTATION);
  if (now.state === 'Missing') return [required(p, now.reason)];
  if (now.state === 'Invalid') return [invalid(p, now.value, now.reason)];
  return [];
}

/** The KubernetesAPIApprovalPolicyConformant condition, for a CRD in a protected group only. */
export function apiApprovalCondition(crd: KubeObject): CrdCondition | undefined {
  if (!isProtectedGroup(stringAt(objectAt(crd, 'spec'), 'group'))) return undefined;
  const a = approvalOf(crd);
  const type = 'KubernetesAPIApprovalPolicyConformant';
  switch (a.state) {
    case 'Approved':
      return { type, status: 'True', reason: 'ApprovedAnnotation', message: a.reason };
    case 'Bypassed':
      return { type, status: 'False', reason: 'UnapprovedAnnotation', message: a.reason };
    case 'Missing':
      return { type, status: 'False', reason: 'MissingAnnotation', message: a.reason };
    default:
      return { type, status: 'False', reason: 'InvalidAnnotation', message: a.reason };
  }
}
