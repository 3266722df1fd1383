/**
 * The policy/binding wiring shared by validating and mutating admission policies: failurePolicy,
 * paramKind, paramRef and policyName (Kubernetes' admissionregistration validation).
 */
import { FieldPath, forbidden, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import { isObject, isSet, objectAt, stringAt } from '../api/json-access.js';
import { validateLabelSelector } from './labels.js';
import { isDNS1035Label, isDNS1123Subdomain, isPathSegmentName } from '../api/name-formats.js';
import { FAILURE_POLICIES } from './shared-types.js';

/** failurePolicy of a policy: required (defaulting sets Fail) and Fail or Ignore. */
export function validateFailurePolicy(spec: unknown, p: FieldPath): FieldError[] {
  const v = isObject(spec) ? spec.failurePolicy : undefined;
  if (v === undefined || v === null) return [required(p, '')];
  return (FAILURE_POLICIES as readonly unknown[]).includes(v) ? [] : [notSupported(p, v, FAILURE_POLICIES)];
}

/** failurePolicy where it is optional (webhooks): only a set value is checked. */
export function validateOptionalFailurePolicy(holder: unknown, p: FieldPath): FieldError[] {
  return isSet(holder, 'failurePolicy') ? validateFailurePolicy(holder, p) : [];
}

/** "group/version" → parts; "" and "/" have neither, more than one '/' does not parse. */
function parseGroupVersion(gv: string): { group: string; version: string } | Error {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: gv };
  if (parts.length === 2) return { group: parts[0], version: parts[1] };
  return new Error(`unexpected GroupVersion string: ${gv}`);
}

/**
 * paramKind: apiVersion is "group/version" with a DNS-subdomain group (the core group may be
 * omitted) and a DNS-1035 version, kind is a DNS-1035 label once lower-cased.
 */
export function validateParamKind(paramKind: unknown, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = stringAt(paramKind, 'apiVersion');
  if (!apiVersion) {
    errs.push(required(p.child('apiVersion'), ''));
  } else {
    const gv = parseGroupVersion(apiVersion);
    if (gv instanceof Error) {
      errs.push(invalid(p.child('apiVersion'), apiVersion, gv.message));
    } else {
      const groupErrs = gv.group ? isDNS1123Subdomain(gv.group) : [];
      if (groupErrs.length) errs.push(invalid(p.child('apiVersion'), gv.group, groupErrs.join(',')));
      if (!gv.version) {
        errs.push(invalid(p.child('apiVersion'), apiVersion, 'version must be specified'));
      } else {
        const versionErrs = isDNS1035Label(gv.version);
        if (versionErrs.length) errs.push(invalid(p.child('apiVersion'), gv.version, versionErrs.join(',')));
      }
    }
  }
  const kind = stringAt(paramKind, 'kind');
  if (!kind) {
    errs.push(required(p.child('kind'), ''));
  } else {
    const kindErrs = isDNS1035Label(kind.toLowerCase());
    if (kindErrs.length) errs.push(invalid(p.child('kind'), kind, `may have mixed case, but should otherwise match: ${kindErrs.join(',')}`));
  }
  return errs;
}

/**
 * paramRef (when set): exactly one of name (a path segment) and selector (a strict label selector),
 * and parameterNotFoundAction Allow or Deny, which is required.
 */
export function validateParamRef(paramRef: unknown, p: FieldPath): FieldError[] {
  if (!isObject(paramRef)) return [];
  const errs: FieldError[] = [];
  const name = stringAt(paramRef, 'name');
  const selector = objectAt(paramRef, 'selector');
  if (name) {
    errs.push(...isPathSegmentName(name).map((m) => invalid(p.child('name'), name, m)));
    if (selector) errs.push(forbidden(p.child('name'), 'name and selector are mutually exclusive'));
  }
  if (selector) {
    errs.push(...validateLabelSelector(selector, p.child('selector')));
    if (name) errs.push(forbidden(p.child('selector'), 'name and selector are mutually exclusive'));
  }
  if (!name && !selector) errs.push(required(p, 'one of name or selector must be specified'));
  const action = paramRef.parameterNotFoundAction;
  if (action === undefined || action === null || action === '') errs.push(required(p.child('parameterNotFoundAction'), ''));
  else if (action !== 'Deny' && action !== 'Allow') errs.push(notSupported(p.child('parameterNotFoundAction'), action, ['Deny', 'Allow']));
  return errs;
}

/** A binding's policyName: required, and a policy name (DNS subdomain). */
export function validatePolicyName(spec: unknown, p: FieldPath): FieldError[] {
  const name = stringAt(spec, 'policyName');
  if (!name) return [required(p, '')];
  return isDNS1123Subdomain(name).map((m) => invalid(p, name, m));
}
