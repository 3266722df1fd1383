/**
 * Rules and MatchResources of the admission kinds (Kubernetes' admissionregistration validation):
 * which operations, groups, versions, resources and scopes a policy, binding or webhook matches.
 */
import { FieldPath, duplicate, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import { isObject, listAt, objectAt, stringsOf } from '../api/json-access.js';
import { validateLabelSelector } from './labels.js';
import { isPathSegmentName } from '../api/name-formats.js';
import { MATCH_POLICIES, OPERATIONS, SCOPES } from './shared-types.js';

/** A mutating policy or its binding cannot match DELETE; "*" there means CREATE, UPDATE and CONNECT. */
export const MUTATING_POLICY_OPERATIONS = ['*', 'CONNECT', 'CREATE', 'UPDATE'] as const;

const hasWildcard = (list: string[]): boolean => list.includes('*');

/**
 * resources of a rule, subresources allowed: "*" cannot sit beside plain resources, "*\/*" beside
 * anything, and "x/*" or "*\/y" make a more specific "x/z" or "w/y" redundant.
 */
function validateResources(resources: string[], p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(required(p, ''));
  const withWildcardSub = new Set<string>();
  const withWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let plainResource = false;
  resources.forEach((rs, i) => {
    if (rs === '') {
      errs.push(required(p.index(i), ''));
      return;
    }
    if (rs === '*/*') doubleWildcard = true;
    if (rs === '*') singleWildcard = true;
    const slash = rs.indexOf('/');
    if (slash < 0) {
      // Kubernetes keeps only the last entry's answer here; matched so the same lists pass.
      plainResource = rs !== '*';
      return;
    }
    const res = rs.slice(0, slash);
    const sub = rs.slice(slash + 1);
    if (withWildcardSub.has(res)) errs.push(invalid(p.index(i), rs, `if '${res}/*' is present, must not specify ${rs}`));
    if (withWildcardRes.has(sub)) errs.push(invalid(p.index(i), rs, `if '*/${sub}' is present, must not specify ${rs}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') withWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) errs.push(invalid(p, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && plainResource) errs.push(invalid(p, resources, "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

/** Rule: apiGroups and apiVersions non-empty without a mixed-in "*", resources as above, a known scope. */
function validateRule(rule: unknown, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const groups = stringsOf(listAt(rule, 'apiGroups'));
  const versions = stringsOf(listAt(rule, 'apiVersions'));
  if (groups.length === 0) errs.push(required(p.child('apiGroups'), ''));
  if (groups.length > 1 && hasWildcard(groups)) errs.push(invalid(p.child('apiGroups'), groups, "if '*' is present, must not specify other API groups"));
  // An empty group is fine: it is the core group.
  if (versions.length === 0) errs.push(required(p.child('apiVersions'), ''));
  if (versions.length > 1 && hasWildcard(versions)) errs.push(invalid(p.child('apiVersions'), versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(required(p.child('apiVersions').index(i), ''));
  });
  errs.push(...validateResources(stringsOf(listAt(rule, 'resources')), p.child('resources')));
  if (isObject(rule) && rule.scope !== undefined && rule.scope !== null && !(SCOPES as readonly unknown[]).includes(rule.scope)) {
    errs.push(notSupported(p.child('scope'), rule.scope, SCOPES));
  }
  return errs;
}

/** RuleWithOperations: webhook rules and the base of policy rules. */
export function validateRuleWithOperations(rule: unknown, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const ops = stringsOf(listAt(rule, 'operations'));
  if (ops.length === 0) errs.push(required(p.child('operations'), ''));
  if (ops.length > 1 && hasWildcard(ops)) errs.push(invalid(p.child('operations'), ops, "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => {
    if (!(OPERATIONS as readonly string[]).includes(op)) errs.push(notSupported(p.child('operations').index(i), op, OPERATIONS));
  });
  errs.push(...validateRule(rule, p));
  return errs;
}

/** NamedRuleWithOperations: resourceNames are path segments without duplicates. */
function validateNamedRule(rule: unknown, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  stringsOf(listAt(rule, 'resourceNames')).forEach((name, i) => {
    const np = p.child('resourceNames').index(i);
    errs.push(...isPathSegmentName(name).map((m) => invalid(np, name, m)));
    if (seen.has(name)) errs.push(duplicate(np, name));
    seen.add(name);
  });
  errs.push(...validateRuleWithOperations(rule, p));
  return errs;
}

/**
 * MatchResources (after defaulting): matchPolicy and both selectors are required, selectors are
 * strict label selectors, and every include and exclude rule is a valid named rule.
 */
export function validateMatchResources(mr: unknown, p: FieldPath): FieldError[] {
  if (!isObject(mr)) return [];
  const errs: FieldError[] = [];
  const matchPolicy = mr.matchPolicy;
  if (matchPolicy === undefined || matchPolicy === null) errs.push(required(p.child('matchPolicy'), ''));
  else if (!(MATCH_POLICIES as readonly unknown[]).includes(matchPolicy)) errs.push(notSupported(p.child('matchPolicy'), matchPolicy, MATCH_POLICIES));
  for (const sel of ['namespaceSelector', 'objectSelector'] as const) {
    const s = objectAt(mr, sel);
    if (!s) errs.push(required(p.child(sel), ''));
    else errs.push(...validateLabelSelector(s, p.child(sel)));
  }
  listAt(mr, 'resourceRules').forEach((r, i) => errs.push(...validateNamedRule(r, p.child('resourceRules').index(i))));
  listAt(mr, 'excludeResourceRules').forEach((r, i) => errs.push(...validateNamedRule(r, p.child('excludeResourceRules').index(i))));
  return errs;
}

/**
 * A policy's matchConstraints: required, valid, and with at least one resourceRule, which is what
 * gives its expressions their type information.
 */
export function validateMatchConstraints(mc: unknown, p: FieldPath): FieldError[] {
  if (!isObject(mc)) return [required(p, '')];
  const errs = validateMatchResources(mc, p);
  if (listAt(mc, 'resourceRules').length === 0) errs.push(required(p.child('resourceRules'), ''));
  return errs;
}

/**
 * DELETE (or anything else outside CREATE/UPDATE/CONNECT/"*") in the resourceRules of a mutating
 * policy or binding, at the item's own path (`resourceRules[0].operations[1]`; Kubernetes leaves the
 * indexes out, which does not say which item is wrong).
 */
export function validateMutatingOperations(mr: unknown, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  listAt(mr, 'resourceRules').forEach((rule, i) => {
    stringsOf(listAt(rule, 'operations')).forEach((op, j) => {
      const at = p.child('resourceRules').index(i).child('operations').index(j);
      if (!(MUTATING_POLICY_OPERATIONS as readonly string[]).includes(op)) errs.push(notSupported(at, op, MUTATING_POLICY_OPERATIONS));
    });
  });
  return errs;
}

const covers = (list: string[], value: string): boolean => list.includes('*') || list.includes(value);

/**
 * Whether a rule covers a resource of a group (wildcards included, subresources ignored). A policy
 * may list rules that cover its own kinds: Kubernetes accepts them and its admission plugins skip
 * those kinds at run time, so the admission room uses this to exempt them; validation does not
 * reject them.
 */
export function ruleCoversResource(rule: unknown, group: string, resource: string): boolean {
  const resources = stringsOf(listAt(rule, 'resources')).map((r) => r.split('/')[0]);
  return covers(stringsOf(listAt(rule, 'apiGroups')), group) && covers(resources, resource);
}
