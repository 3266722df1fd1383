/**
 * metav1.Condition lists as Kubernetes validates them (ValidateConditions): unique types, each a
 * qualified name, a known status, a transition time and a CamelCase reason.
 */
import { FieldPath, duplicate, invalid, notSupported, required, tooLong, type FieldError } from '../api/field-errors.js';
import { byteLength, numberAt, stringAt } from '../api/json-access.js';
import { validateLabelName } from './labels.js';
import { regexError } from '../api/name-formats.js';

const STATUSES = ['False', 'True', 'Unknown'];
const MAX_REASON = 1024;
const MAX_MESSAGE = 32 * 1024;
const reasonFmt = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const reasonRe = new RegExp(`^${reasonFmt}$`);

export function validateConditions(conditions: unknown[], p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const cp = p.index(i);
    const type = stringAt(c, 'type');
    if (seen.has(type)) errs.push(duplicate(cp.child('type'), type));
    seen.add(type);
    errs.push(...validateLabelName(type, cp.child('type')));
    const status = stringAt(c, 'status');
    if (!STATUSES.includes(status)) errs.push(notSupported(cp.child('status'), status, STATUSES));
    const observed = numberAt(c, 'observedGeneration');
    if (observed !== undefined && observed < 0) errs.push(invalid(cp.child('observedGeneration'), observed, 'must be greater than or equal to zero'));
    if (!stringAt(c, 'lastTransitionTime')) errs.push(required(cp.child('lastTransitionTime'), 'must be set'));
    const reason = stringAt(c, 'reason');
    if (!reason) {
      errs.push(required(cp.child('reason'), 'must be set'));
    } else {
      if (!reasonRe.test(reason)) {
        const msg = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";
        errs.push(invalid(cp.child('reason'), reason, regexError(msg, reasonFmt, 'my_name', 'MY_NAME', 'MyName', 'ReasonA,ReasonB', 'ReasonA:ReasonB')));
      }
      if (byteLength(reason) > MAX_REASON) errs.push(tooLong(cp.child('reason'), reason, MAX_REASON));
    }
    const message = stringAt(c, 'message');
    if (byteLength(message) > MAX_MESSAGE) errs.push(tooLong(cp.child('message'), message, MAX_MESSAGE));
  });
  return errs;
}
