/**
 * Labels and label selectors as Kubernetes validates them (meta/v1 validation): the checks behind
 * metadata.labels and behind every LabelSelector field (namespaceSelector, objectSelector,
 * paramRef.selector).
 */
import { FieldPath, invalid, required, forbidden, type FieldError } from '../api/field-errors.js';
import { isObject, listAt, objectAt, stringAt, stringsOf } from '../api/json-access.js';
import { isLabelValue, isQualifiedName } from '../api/name-formats.js';

/** A label key (also a selector key, a condition type): a qualified name. */
export const validateLabelName = (key: string, p: FieldPath): FieldError[] => isQualifiedName(key).map((m) => invalid(p, key, m));

/** Keys and values of a label map; errors name the map itself, not the key, as Kubernetes does. */
export function validateLabels(labels: unknown, p: FieldPath): FieldError[] {
  if (!isObject(labels)) return [];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels)) {
    errs.push(...validateLabelName(k, p));
    if (typeof v === 'string') errs.push(...isLabelValue(v).map((m) => invalid(p, v, m)));
  }
  return errs;
}

export interface LabelSelectorOptions {
  /** Ratchet: an update may keep selector values that were invalid before stricter checks existed. */
  allowInvalidLabelValueInSelector?: boolean;
}

/** A LabelSelector: matchLabels like labels, each matchExpressions entry by its operator. */
export function validateLabelSelector(selector: unknown, p: FieldPath, opts: LabelSelectorOptions = {}): FieldError[] {
  if (!isObject(selector)) return [];
  const errs = validateLabels(objectAt(selector, 'matchLabels'), p.child('matchLabels'));
  listAt(selector, 'matchExpressions').forEach((req, i) => errs.push(...validateRequirement(req, p.child('matchExpressions').index(i), opts)));
  return errs;
}

function validateRequirement(req: unknown, p: FieldPath, opts: LabelSelectorOptions): FieldError[] {
  const errs: FieldError[] = [];
  const operator = stringAt(req, 'operator');
  const values = stringsOf(listAt(req, 'values'));
  if (operator === 'In' || operator === 'NotIn') {
    if (values.length === 0) errs.push(required(p.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (operator === 'Exists' || operator === 'DoesNotExist') {
    if (values.length > 0) errs.push(forbidden(p.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  } else {
    errs.push(invalid(p.child('operator'), operator, 'not a valid selector operator'));
  }
  errs.push(...validateLabelName(stringAt(req, 'key'), p.child('key')));
  if (!opts.allowInvalidLabelValueInSelector) {
    values.forEach((v, i) => errs.push(...isLabelValue(v).map((m) => invalid(p.child('values').index(i), v, m))));
  }
  return errs;
}

/** Whether a selector holds a value the strict check rejects (decides the update ratchet). */
export function labelSelectorHasInvalidValue(selector: unknown): boolean {
  return listAt(selector, 'matchExpressions').some((req) => stringsOf(listAt(req, 'values')).some((v) => isLabelValue(v).length > 0));
}
