/**
 * What every admission policy spec and every binding spec has in common, validated and defaulted
 * once for the validating and mutating flavours.
 */
import { defaultFailurePolicy, defaultMatchResources } from './admission-defaults.js';
import { validateMatchConditions, validateVariables } from './admission-expressions.js';
import { validateFailurePolicy, validateParamKind, validateParamRef, validatePolicyName } from './admission-params.js';
import { validateMatchConstraints, validateMatchResources } from './admission-rules.js';
import { FieldPath, type FieldError } from '../api/field-errors.js';
import { listAt, objectAt } from '../api/json-access.js';

/** failurePolicy, paramKind, matchConstraints, matchConditions and variables of a policy spec. */
export function validatePolicySpecCommon(spec: unknown, p: FieldPath): FieldError[] {
  const errs = validateFailurePolicy(spec, p.child('failurePolicy'));
  const paramKind = objectAt(spec, 'paramKind');
  if (paramKind) errs.push(...validateParamKind(paramKind, p.child('paramKind')));
  errs.push(...validateMatchConstraints(objectAt(spec, 'matchConstraints'), p.child('matchConstraints')));
  errs.push(...validateMatchConditions(listAt(spec, 'matchConditions'), p.child('matchConditions')));
  errs.push(...validateVariables(listAt(spec, 'variables'), p.child('variables')));
  return errs;
}

/** A policy spec's defaults: failurePolicy Fail and the MatchResources defaults of matchConstraints. */
export function defaultPolicySpec(spec: unknown): void {
  defaultFailurePolicy(spec);
  defaultMatchResources(objectAt(spec, 'matchConstraints'));
}

/** policyName, paramRef and matchResources of a binding spec. */
export function validateBindingSpecCommon(spec: unknown, p: FieldPath): FieldError[] {
  return [
    ...validatePolicyName(spec, p.child('policyName')),
    ...validateParamRef(objectAt(spec, 'paramRef'), p.child('paramRef')),
    ...validateMatchResources(objectAt(spec, 'matchResources'), p.child('matchResources')),
  ];
}
