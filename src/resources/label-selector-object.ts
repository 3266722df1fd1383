/**
 * metav1.LabelSelector objects (matchLabels, matchExpressions) as label requirements: an empty
 * selector matches everything, as Kubernetes' LabelSelectorAsSelector makes it.
 */
import { isObject, listAt, stringAt, stringsOf } from '../api/json-access.js';
import type { Requirement } from '../selectors/label-selector.js';

const OPERATORS: Record<string, Requirement['op']> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

export function selectorRequirements(selector: unknown): Requirement[] {
  if (!isObject(selector)) return [];
  const reqs: Requirement[] = [];
  const labels = selector.matchLabels;
  if (isObject(labels)) for (const [key, v] of Object.entries(labels)) reqs.push({ key, op: '=', values: [String(v)] });
  for (const e of listAt(selector, 'matchExpressions')) {
    const op = OPERATORS[stringAt(e, 'operator')];
    if (!op) throw new Error(`"${stringAt(e, 'operator')}" is not a valid label selector operator`);
    reqs.push({ key: stringAt(e, 'key'), op, values: [...new Set(stringsOf(listAt(e, 'values')))].sort() });
  }
  return reqs;
}
