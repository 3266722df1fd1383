/**
 * Kubernetes' admissionregistration defaulting (pkg/apis/admissionregistration/v1*, defaults.go),
 * shared by the policy, binding and webhook kinds.
 */
import { defaultField, isObject, listAt, objectAt } from '../api/json-access.js';

/** Rule.scope defaults to "*" (both cluster-scoped and namespaced resources). */
export function defaultRuleScopes(rules: unknown[]): void {
  for (const r of rules) if (isObject(r)) defaultField(r, 'scope', '*');
}

/** MatchResources: matchPolicy Equivalent, empty (match-all) selectors, rule scopes "*". */
export function defaultMatchResources(mr: unknown): void {
  if (!isObject(mr)) return;
  defaultField(mr, 'matchPolicy', 'Equivalent');
  defaultField(mr, 'namespaceSelector', {});
  defaultField(mr, 'objectSelector', {});
  defaultRuleScopes(listAt(mr, 'resourceRules'));
  defaultRuleScopes(listAt(mr, 'excludeResourceRules'));
}

/** failurePolicy of a policy spec defaults to Fail. */
export function defaultFailurePolicy(spec: unknown): void {
  if (isObject(spec)) defaultField(spec, 'failurePolicy', 'Fail');
}

/**
 * Only the v1alpha1 API defaults paramRef.parameterNotFoundAction (to Deny); v1beta1 and v1 require
 * it. The object's apiVersion says which API the client wrote to.
 */
export function defaultParamRef(spec: unknown, apiVersion: string): void {
  const ref = objectAt(spec, 'paramRef');
  if (ref && apiVersion.endsWith('/v1alpha1')) defaultField(ref, 'parameterNotFoundAction', 'Deny');
}
